//! Browser bindings of stepwise-core: the exact code the Worker runs, compiled to wasm.
//!
//! Thin wrappers only: [`Workflow`] (spec, step inference, action validation) and
//! [`MarkerStream`] (incremental marker parsing). Plain data crosses the boundary in the wire's
//! snake_case shape: out with serde-wasm-bindgen, in through a small serde deserializer over
//! `JsValue` (`input.rs`, which words type errors without linking float formatting). Marker
//! events and the whole parse are built by small JS constructors, one call each (`events.rs`),
//! and the package's entry (`js/stepwise.js`) defines `MarkerStream.feed` around
//! [`MarkerStream::feed_chunk`]. Errors are JS `Error`s with a `code`.
//!
//! ```js
//! import init, { Workflow, MarkerStream } from "stepwise-wasm";
//! await init();
//! const workflow = Workflow.builtin("research_stream");
//! workflow.inferStep({ purpose: "Track rivals" }, []);           // "business_goals"
//! const stream = new MarkerStream(["SCHEMA_PROPOSAL"]);
//! stream.feed("Pick:\nSUGGESTIONS: a, b\n");                   // [{type:"text",...}, {type:"marker",...}]
//! ```

mod assistant_types;
mod error;
mod events;
mod input;
mod marker_stream;
mod plain;
mod registry;
mod types;
mod workflow;

pub use marker_stream::{
    CHUNK_AS_TEXT, EVENTS_READY, MarkerStream, NO_EVENTS, SPANS_READY, WINDOW_ADD, WINDOW_OPEN,
};
pub use registry::resolve_chat_lines;
pub use workflow::Workflow;

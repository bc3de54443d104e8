//! Browser bindings of stepwise-core: the exact code the Worker runs, compiled to wasm.
//!
//! Thin wrappers only: [`Workflow`] (spec, step inference, action validation),
//! [`MarkerStream`] (incremental marker parsing) and [`resolve_chat`] (the assistant's
//! resolution). Plain data crosses the boundary in the wire's snake_case shape through
//! serde-wasm-bindgen, both ways (`error.rs`). The streaming path is the exception, built for
//! speed: the package's entry (`js/stepwise.js`) defines `MarkerStream`'s `feed`, `end` and
//! `finish` around [`MarkerStream::feed_input`]: it takes the lines of display text it can tell
//! apart by their first character itself (telling the core how much with its next call), writes the rest of each
//! chunk into wasm memory in place and reads its events, and `finish`'s parse, from a tape of
//! numbers (`tape.rs`: text, and the strings of marker lines parsed in place, as ranges of the
//! caller's chunk, other strings as ranges of one blob; `finish`'s strings as references to
//! the markers' strings).
//! Errors are JS `Error`s with a `code`.
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
mod marker_stream;
mod registry;
mod tape;
mod types;
mod utf16;
mod window;
mod workflow;

pub use marker_stream::{
    BLOB_READY, CHUNK_AS_TEXT, EVENTS_READY, HOLDING, MarkerStream, NO_EVENTS, SPANS_READY,
    WINDOW_ADD, WINDOW_OPEN,
};
pub use registry::resolve_chat;
pub use tape::{DIAGNOSTIC, EARLIER, IN_CHUNK, KINDS, MARKER, PIECES, REF, SPAN, TEXT};
pub use workflow::Workflow;

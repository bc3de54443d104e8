//! Browser bindings of stepwise-core: the exact code the Worker runs, compiled to wasm.
//!
//! Thin wrappers only: [`Workflow`] (spec, step inference, action validation) and
//! [`MarkerStream`] (incremental marker parsing). Plain data crosses the boundary with
//! serde-wasm-bindgen in the wire's snake_case shape, except the streaming events, which small JS
//! constructors build in one call each (`events.rs`); errors are JS `Error`s with a `code`.
//!
//! ```js
//! import init, { Workflow, MarkerStream } from "stepwise-wasm";
//! await init();
//! const workflow = Workflow.builtin("research_stream");
//! workflow.inferStep({ purpose: "Track rivals" }, []);           // "business_goals"
//! const stream = new MarkerStream(["SCHEMA_PROPOSAL"]);
//! stream.feed("Pick:\nSUGGESTIONS: a, b\n");                   // [{type:"text",...}, {type:"marker",...}]
//! ```

mod error;
mod events;
mod input;
mod marker_stream;
mod types;
mod workflow;

pub use marker_stream::{CHUNK_AS_TEXT, EVENTS_READY, MarkerStream, NO_EVENTS};

/// Talc instead of the default dlmalloc: smaller in the package and faster on small blocks.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
pub use workflow::Workflow;

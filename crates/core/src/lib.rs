//! Stepwise core: explicit, validated state for LLM-guided conversations, with no I/O.
//!
//! - [`workflow`]: workflow specs, collected config, step inference and user actions.
//! - [`json`]: JSON validated while it streams, kept as text ([`json::JsonText`]).
//! - [`markers`]: the streaming parser of marker lines in model output.
//! - [`turn`]: one chat turn as a sans-IO machine: [`turn::begin`] → the model call → [`turn::finish`].
//! - [`protocol`]: the wire types (ChatRequest, ChatResponse, SSE events).
//!
//! Time, ids and fetched data are inputs; effects (calling a model, storing, streaming) are the
//! caller's. The same code runs natively (the Worker) and in wasm32 (the browser).
//!
//! A whole turn:
//!
//! ```
//! use stepwise_core::{markers::MarkerParser, protocol::ChatRequest, turn, workflow::WorkflowSpec};
//!
//! let spec = WorkflowSpec::builtin("research_stream").unwrap();
//! let request: ChatRequest = serde_json::from_str(r#"{
//!     "message": "Monitor competitive landscape for strategic planning",
//!     "current_step": "purpose",
//!     "current_config": {},
//!     "conversation_history": [],
//!     "user_action": {"type": "text_input"}
//! }"#).unwrap();
//!
//! let Ok(turn::TurnStart::CallModel(plan)) = turn::begin(&spec, &request) else { panic!("model call expected") };
//! assert_eq!(plan.step, "purpose");
//!
//! // The driver streams the model's reply through the parser...
//! let mut parser = MarkerParser::new();
//! for chunk in ["Got it.\nEXTRACTED_DATA: purpose=Monitor competitive lands", "cape for strategic planning\n",
//!               "Which business goals matter?\nSUGGESTIONS: Track launches, Price moves\n"] {
//!     for _event in parser.feed(chunk) { /* forward text to the user */ }
//! }
//! // ...and lets the core apply what it found.
//! let outcome = turn::finish(&spec, &plan, parser.finish());
//! let response = outcome.response;
//! assert_eq!(response.next_step, "business_goals");
//! assert_eq!(response.suggestions, ["Track launches", "Price moves"]);
//! assert_eq!(response.message, "Got it.\nWhich business goals matter?");
//! ```

pub mod agent;
pub mod answers;
pub mod approval;
pub mod conversation;
pub mod dates;
pub mod handshake;
pub mod help;
pub mod interop;
pub mod interrupt;
pub mod json;
pub mod llm;
pub mod markers;
pub mod mcp;
pub mod offline;
pub mod owner;
pub mod protocol;
pub mod pubmed;
pub mod registry;
pub mod research;
#[cfg(feature = "schema")]
mod schema;
pub mod spend;
pub mod sse;
pub mod streams;
pub mod turn;
pub mod workflow;

/// The crate README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

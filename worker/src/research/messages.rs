//! The research jobs' queue messages. They live here, below their sender (the job's effects)
//! and their receivers (the consumers), so neither imports the other. Every message names its
//! `kind`, by which the consumer routes it, whatever queue it came from.

use serde::{Deserialize, Serialize};
use stepwise_core::research::CallTask;

/// The `kind` of a provider or synthesis call.
pub const LLM_CALL: &str = "llm_call";
/// The `kind` of a lifecycle event: `{"kind": "research_event", "event": {...}}`.
pub const RESEARCH_EVENT: &str = "research_event";

/// A message of the `llm-call` queue: one provider (or synthesis) call of one job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallMessage {
    /// [`LLM_CALL`].
    pub kind: String,
    /// The job.
    pub research_id: String,
    /// Provider call or synthesis.
    pub task: CallTask,
    /// The provider to call.
    pub provider: String,
    /// The attempt: with the job and provider, the idempotency key.
    pub attempt: u32,
}

/// The JSON text of a lifecycle event's message, around the event's own JSON.
pub fn event_message(event_json: &str) -> String {
    format!(r#"{{"kind":"{RESEARCH_EVENT}","event":{event_json}}}"#)
}

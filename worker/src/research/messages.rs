//! The `llm-call` queue's message. It lives here, below its sender (the job's effects) and its
//! receiver (the consumer), so neither imports the other.

use serde::{Deserialize, Serialize};
use stepwise_core::research::CallTask;

/// A message of the `llm-call` queue: one provider (or synthesis) call of one job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallMessage {
    /// The job.
    pub research_id: String,
    /// Provider call or synthesis.
    pub task: CallTask,
    /// The provider to call.
    pub provider: String,
    /// The attempt: with the job and provider, the idempotency key.
    pub attempt: u32,
}

//! The messages of research jobs between the Worker's parts: requests to a job's Durable
//! Object and its answer to a claim, and the `llm-call` queue's message. They live here, below
//! their senders (handlers, the consumer, effects) and their receivers (the object, the
//! consumer), so no two of those import each other.

use serde::{Deserialize, Serialize};
use stepwise_core::research::{CallTask, Command};

/// A request to a job's Durable Object. Externally tagged (`{"apply": {...}}`): an internally
/// tagged enum would buffer every request, records included, through serde's `Content` tree.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobRequest {
    /// Read the job.
    Get,
    /// Open an events stream.
    Events,
    /// Apply a command; answered with the job.
    Apply {
        /// The command.
        command: Command,
        /// The public origin of the request, remembered for share links when the job starts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<String>,
    },
    /// A queue consumer asks to make a queued call; answered with a [`ClaimAnswer`].
    Claim {
        /// Provider call or synthesis.
        task: CallTask,
        /// The provider.
        provider: String,
        /// The attempt.
        attempt: u32,
    },
}

/// A job's answer to a claim.
#[derive(Debug, Serialize, Deserialize)]
pub struct ClaimAnswer {
    /// False for a duplicate delivery or a call the job no longer waits for.
    pub open: bool,
    /// The research prompt, or the synthesis prompt with its sources.
    #[serde(default)]
    pub prompt: String,
}

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

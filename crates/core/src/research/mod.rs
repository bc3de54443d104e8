//! Multi-LLM research jobs (research-lifecycle.md) as a sans-IO state machine: one prompt fanned
//! out to several providers, completion detection, synthesis or its skip, partial-failure
//! confirmation, retries. Time is an input; every transition returns the effects to perform.

mod job;
mod text;
mod types;

pub use text::{fallback_title, synthesis_prompt};
pub use types::{
    ConfirmAction, Effect, ExternalReport, LlmResult, LlmStatus, MAX_RETRIES, PartialFailure,
    ProviderOutcome, Research, ResearchError, ResearchEvent, ResearchStatus, ShareInfo,
};

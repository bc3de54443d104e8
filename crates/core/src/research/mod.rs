//! Multi-LLM research jobs (research-lifecycle.md) as a sans-IO state machine: one prompt fanned
//! out to several providers, completion detection, synthesis or its skip, partial-failure
//! confirmation, retries. Time is an input; every transition returns the effects to perform.

mod job;
mod share;
mod text;
mod types;

pub use share::share_html;
pub use text::{TITLE_SYSTEM_PROMPT, clean_title, fallback_title, synthesis_prompt};
pub use types::{
    ConfirmAction, Effect, ExternalReport, LlmResult, LlmStatus, MAX_RETRIES, PartialFailure,
    ProviderOutcome, Research, ResearchError, ResearchEvent, ResearchStatus, ShareInfo,
};

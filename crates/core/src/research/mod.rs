//! Multi-LLM research jobs (research-lifecycle.md) as a sans-IO protocol: one prompt fanned out
//! to several providers, completion detection, synthesis or its skip, partial-failure
//! confirmation, retries, claims of queued calls and timeouts. Every change is a [`Command`]
//! given to [`handle`], which returns the [`Effect`]s to perform; time and random ids are inputs.

mod command;
mod job;
mod share;
mod text;
mod types;
mod view;

pub use command::{Command, handle};
pub use job::{MAX_EXTERNAL_REPORT_CHARS, MAX_EXTERNAL_REPORTS, MAX_PROMPT_CHARS, MAX_PROVIDERS};
pub use share::share_html;
pub use text::{TITLE_SYSTEM_PROMPT, clean_title, fallback_title, synthesis_prompt};
pub use types::{
    CallTask, ConfirmAction, Effect, ExternalReport, LlmResult, LlmStatus, MAX_RETRIES,
    PartialFailure, ProviderOutcome, Research, ResearchError, ResearchEvent, ResearchStatus,
    ShareInfo,
};
pub use view::ResearchView;

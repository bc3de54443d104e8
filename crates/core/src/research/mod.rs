//! Multi-LLM research jobs (research-lifecycle.md) as a sans-IO protocol: one prompt fanned out
//! to several providers, completion detection, synthesis or its skip, partial-failure
//! confirmation, retries, claims of queued calls, sharing, deletion and expiry. Every change is
//! a [`Command`] from a [`Caller`] given to [`handle`], which returns the [`Effect`]s to perform;
//! time and random ids are inputs.

mod command;
mod compare;
mod job;
mod points;
mod requests;
mod share;
mod text;
mod types;
mod view;

pub use command::{Command, Handled, handle, read};
pub use compare::compare_reports;
pub use job::{
    MAX_EXTERNAL_REPORT_CHARS, MAX_EXTERNAL_REPORTS, MAX_EXTERNAL_TOTAL_CHARS, MAX_PROMPT_CHARS,
    MAX_PROVIDERS, MAX_TITLE_CHARS,
};
pub use points::{
    MAX_POINT_CHARS, MAX_POINTS, POINTS_INSTRUCTION, POINTS_MARKER, SynthesisParts, split_synthesis,
};
pub use requests::{ConfirmRequest, DraftRequest, StartRequest};
pub use share::share_html;
pub use text::{
    MAX_SYNTHESIS_SOURCE_CHARS, TITLE_SYSTEM_PROMPT, clean_title, fallback_title, synthesis_prompt,
};
pub use types::{
    CallTask, Caller, ConfirmAction, DraftFields, Effect, ExternalReport, Lifetimes, LlmResult,
    LlmStatus, MAX_RETRIES, PartialFailure, ProviderOutcome, Research, ResearchError,
    ResearchEvent, ResearchStatus, ShareInfo,
};
pub use view::ResearchView;

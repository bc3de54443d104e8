//! Research job data: statuses, per-provider results, effects, events and errors.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::llm::{ErrorCode, ProviderError};

/// Retries of failed providers allowed after a partial failure.
pub const MAX_RETRIES: u32 = 2;

/// Where a research job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ResearchStatus {
    /// Created, not started.
    Draft,
    /// Provider calls are running.
    Processing,
    /// The synthesis call is running.
    Synthesizing,
    /// Some providers failed; the user decides (proceed, retry, cancel).
    AwaitingConfirmation,
    /// Failed providers are being called again.
    Retrying,
    /// Done, with or without a synthesis.
    Completed,
    /// Done with an error (see `error`).
    Failed,
}

impl ResearchStatus {
    /// The status as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ResearchStatus::Draft => "draft",
            ResearchStatus::Processing => "processing",
            ResearchStatus::Synthesizing => "synthesizing",
            ResearchStatus::AwaitingConfirmation => "awaiting_confirmation",
            ResearchStatus::Retrying => "retrying",
            ResearchStatus::Completed => "completed",
            ResearchStatus::Failed => "failed",
        }
    }
}

/// Where one provider's call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LlmStatus {
    /// Sent, not started.
    Pending,
    /// The provider is being called.
    Processing,
    /// The provider answered.
    Completed,
    /// The call failed.
    Failed,
}

/// One provider's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LlmResult {
    /// Provider name (from `LLM_PROVIDERS`).
    pub provider: String,
    /// Its state.
    pub status: LlmStatus,
    /// The current attempt, from 1; results of other attempts are ignored.
    pub attempt: u32,
    /// When the current attempt was sent (ms since the epoch).
    pub dispatched_at: u64,
    /// The report, when completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The normalized error code and a message safe to show, when failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProviderError>,
    /// When the attempt ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
}

/// A report the user supplied as extra context for the synthesis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ExternalReport {
    /// Its title.
    pub title: String,
    /// Its text.
    pub content: String,
}

/// A draft's fields as the user wrote them (the title is made by the edge).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DraftFields {
    /// The title: the synthesis model's, or the truncated prompt.
    pub title: String,
    /// The research prompt.
    pub prompt: String,
    /// Providers to ask.
    pub selected_llms: Vec<String>,
    /// Provider that writes the synthesis.
    pub synthesis_llm: String,
    /// Extra context reports.
    pub external_reports: Vec<ExternalReport>,
    /// The saved stream the job researches for (checked by the edge to be the owner's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<String>,
}

/// What a partial failure left behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PartialFailure {
    /// Providers whose calls failed.
    pub failed_providers: Vec<String>,
    /// When it was detected.
    pub detected_at: u64,
    /// Retries already made.
    pub retry_count: u32,
}

/// Where the shareable report lives, while its owner keeps it published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShareInfo {
    /// The share id.
    pub share_id: String,
    /// The public URL.
    pub url: String,
    /// When it was published (ms since the epoch).
    #[serde(default)]
    pub published_at: u64,
    /// When the page expires and is no longer served.
    #[serde(default)]
    pub expires_at: u64,
}

/// Who asks for a change: the job's owner (by owner id), the Worker itself (queue consumers,
/// the job's alarm), or an admin. Anyone but the owner gets [`ResearchError::NotFound`] for an
/// owner's command, so a job's existence is never revealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    /// An owner, by owner id.
    Owner(String),
    /// The Worker's own machinery.
    System,
    /// An admin (`ADMIN_TOKEN`).
    Admin,
}

/// How long things live, from the Worker's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lifetimes {
    /// A provider or synthesis call still open after this fails with `timeout`, in ms.
    pub call_timeout_ms: u64,
    /// A draft not started within this is deleted, in ms.
    pub draft_ttl_ms: u64,
    /// A completed or failed job is deleted this long after it finished, in ms.
    pub retention_ms: u64,
}

impl Default for Lifetimes {
    fn default() -> Self {
        Lifetimes {
            call_timeout_ms: 5 * 60 * 1000,
            draft_ttl_ms: 24 * 3600 * 1000,
            retention_ms: 365 * 24 * 3600 * 1000,
        }
    }
}

/// A research job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ResearchRecord"))]
pub struct Research {
    /// Job id.
    pub id: String,
    /// The owner id: only this owner can read or change the job.
    #[serde(default)]
    pub owner: String,
    /// Title (generated from the prompt).
    pub title: String,
    /// The research prompt.
    pub prompt: String,
    /// Providers to ask.
    pub selected_llms: Vec<String>,
    /// Provider that writes the synthesis.
    pub synthesis_llm: String,
    /// Extra context reports.
    #[serde(default)]
    pub external_reports: Vec<ExternalReport>,
    /// The job's state.
    pub status: ResearchStatus,
    /// Creation time.
    pub created_at: u64,
    /// Start time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<u64>,
    /// Completion (or failure) time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
    /// One result per selected provider.
    #[serde(default)]
    pub llm_results: Vec<LlmResult>,
    /// Set while (and after) some providers failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_failure: Option<PartialFailure>,
    /// Retries of failed providers made so far.
    #[serde(default)]
    pub retry_count: u32,
    /// The synthesis, when one was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesized_result: Option<String>,
    /// The synthesis's points of interest (its `POINTS_OF_INTEREST:` line), when it wrote them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points_of_interest: Vec<String>,
    /// The saved stream this job researches for, when it was started from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<String>,
    /// Why the last synthesis failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesis_error: Option<String>,
    /// The current synthesis attempt (0 before any).
    #[serde(default)]
    pub synthesis_attempt: u32,
    /// When the current synthesis attempt was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesis_dispatched_at: Option<u64>,
    /// The last synthesis attempt a queue consumer claimed (0: none), so a second delivery of
    /// the same attempt is dropped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub synthesis_claimed: u32,
    /// Why the job failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The shareable report, once published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_info: Option<ShareInfo>,
}

/// The user's answer to a partial failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ConfirmAction {
    /// Synthesize with the successful results only.
    Proceed,
    /// Call the failed providers again.
    Retry,
    /// Give up.
    Cancel,
}

/// How one provider (or synthesis) call ended: `{"outcome": "completed", "text"}` or
/// `{"outcome": "failed", "code", "message"}`. Read through a flat struct rather than as an
/// internally tagged enum, which would buffer through serde's `Content` (bundle size).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case", try_from = "FlatOutcome")]
pub enum ProviderOutcome {
    /// The text it produced.
    Completed {
        /// The text.
        text: String,
    },
    /// Why it failed: a normalized code and a message safe to show.
    Failed {
        /// The normalized code.
        code: ErrorCode,
        /// What went wrong.
        message: String,
    },
}

impl ProviderOutcome {
    /// A failure with this code and message.
    pub fn failed(code: ErrorCode, message: impl Into<String>) -> Self {
        ProviderOutcome::Failed {
            code,
            message: message.into(),
        }
    }
}

impl From<ProviderError> for ProviderOutcome {
    fn from(error: ProviderError) -> Self {
        ProviderOutcome::Failed {
            code: error.code,
            message: error.message,
        }
    }
}

/// The wire form of [`ProviderOutcome`], for reading it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlatOutcome {
    outcome: OutcomeKind,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    code: Option<ErrorCode>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum OutcomeKind {
    Completed,
    Failed,
}

impl TryFrom<FlatOutcome> for ProviderOutcome {
    type Error = &'static str;

    fn try_from(flat: FlatOutcome) -> Result<Self, Self::Error> {
        match (flat.outcome, flat.text, flat.code, flat.message) {
            (OutcomeKind::Completed, Some(text), None, None) => {
                Ok(ProviderOutcome::Completed { text })
            }
            (OutcomeKind::Failed, None, Some(code), Some(message)) => {
                Ok(ProviderOutcome::failed(code, message))
            }
            (OutcomeKind::Completed, ..) => Err("a completed outcome has `text` only"),
            (OutcomeKind::Failed, ..) => Err("a failed outcome has `code` and `message`"),
        }
    }
}

/// A lifecycle event, for the events stream and the `research-events` queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResearchEvent {
    /// The job's status changed.
    StatusChanged {
        /// Job id.
        research_id: String,
        /// New status.
        status: ResearchStatus,
        /// When.
        at: u64,
    },
    /// A provider's call changed state.
    ProviderChanged {
        /// Job id.
        research_id: String,
        /// Provider name.
        provider: String,
        /// New state.
        status: LlmStatus,
        /// Attempt number.
        attempt: u32,
        /// When.
        at: u64,
    },
    /// The owner published the completed job's read-only report.
    Published {
        /// Job id.
        research_id: String,
        /// Share id.
        share_id: String,
        /// The public URL of the report.
        url: String,
        /// When the page expires.
        expires_at: u64,
        /// When.
        at: u64,
    },
}

impl ResearchEvent {
    /// The event's name: its `type` (`status_changed`, `provider_changed`, `published`).
    pub fn name(&self) -> &'static str {
        match self {
            ResearchEvent::StatusChanged { .. } => "status_changed",
            ResearchEvent::ProviderChanged { .. } => "provider_changed",
            ResearchEvent::Published { .. } => "published",
        }
    }

    /// The job the event belongs to.
    pub fn research_id(&self) -> &str {
        match self {
            ResearchEvent::StatusChanged { research_id, .. }
            | ResearchEvent::ProviderChanged { research_id, .. }
            | ResearchEvent::Published { research_id, .. } => research_id,
        }
    }
}

/// Something the driver must do after [`handle`](super::handle) accepted a command. The driver
/// saves the record before performing any of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Queue a provider call (one message per provider and attempt).
    CallProvider {
        /// Provider name.
        provider: String,
        /// Attempt number (the idempotency key with the job id and provider).
        attempt: u32,
    },
    /// Queue the synthesis call.
    RunSynthesis {
        /// Synthesis attempt number.
        attempt: u32,
    },
    /// A queued call was claimed by this delivery: make it now, with this prompt.
    MakeCall {
        /// Provider call or synthesis.
        task: CallTask,
        /// The provider to call.
        provider: String,
        /// The attempt claimed.
        attempt: u32,
        /// The research prompt, or the synthesis prompt with its sources.
        prompt: String,
    },
    /// Publish a lifecycle event (events streams and the `research-events` queue).
    Emit(ResearchEvent),
    /// Write the read-only report page ([`share_html`](super::share_html)) under the record's
    /// share id, expiring at its `expires_at`.
    WriteSharePage,
    /// Remove a withdrawn report page.
    DeleteSharePage {
        /// The share id the page was served under.
        share_id: String,
    },
    /// Write the job's entry in its owner's list index (at creation and at final states).
    Index,
    /// The job is gone (deleted by its owner, or expired): remove its stored record, its index
    /// entry and its share page, and end its streams. `research` is the record as it was.
    Erase {
        /// The deleted record.
        research: Box<Research>,
    },
}

/// What a queued call is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallTask {
    /// One selected provider answering the research prompt.
    Provider,
    /// The synthesis provider combining the reports.
    Synthesis,
}

/// Why a research request was refused. Nothing changes on refusal.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ResearchError {
    /// The action is not possible in the job's status.
    #[error("cannot {action} a research job that is {status:?}")]
    Conflict {
        /// What was attempted.
        action: &'static str,
        /// The job's status.
        status: ResearchStatus,
    },
    /// No provider was selected.
    #[error("select at least one provider")]
    NoProvidersSelected,
    /// A selected provider is not configured.
    #[error("provider `{0}` is not configured")]
    ProviderNotConfigured(String),
    /// The draft is invalid (empty prompt, too long, ...).
    #[error("invalid research draft: {0}")]
    InvalidDraft(String),
    /// No job has this id.
    #[error("research not found")]
    NotFound,
    /// A job with this id already exists.
    #[error("the research job exists")]
    Exists,
    /// The record to import is not a valid job (owner, ids, share URL).
    #[error("invalid research record: {0}")]
    InvalidRecord(String),
    /// The job changed between the read a paid command was charged on and the command (a
    /// draft edited while it was being started): nothing was done.
    #[error(
        "the research job changed while this request was made; nothing was started or charged: try again"
    )]
    Changed,
}

impl ResearchError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            ResearchError::Conflict { .. } | ResearchError::Exists => "conflict",
            ResearchError::NotFound => "not_found",
            ResearchError::NoProvidersSelected => "no_providers_selected",
            ResearchError::ProviderNotConfigured(_) => "provider_not_configured",
            ResearchError::InvalidDraft(_) => "invalid_draft",
            ResearchError::InvalidRecord(_) => "invalid_record",
            ResearchError::Changed => "job_changed",
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_are_the_wire_names() {
        for status in [
            ResearchStatus::Draft,
            ResearchStatus::Processing,
            ResearchStatus::Synthesizing,
            ResearchStatus::AwaitingConfirmation,
            ResearchStatus::Retrying,
            ResearchStatus::Completed,
            ResearchStatus::Failed,
        ] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
    }
}

//! The bodies of the research routes as clients send them.

use serde::{Deserialize, Serialize};

use super::{ConfirmAction, ExternalReport};

/// The body of `POST /api/research/draft` and `PUT /api/research/:id/draft`: a draft as the user
/// writes it (the title is made by the server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ResearchDraft"))]
#[serde(deny_unknown_fields)]
pub struct DraftRequest {
    /// The question.
    pub prompt: String,
    /// The providers to ask (default: every configured one).
    #[serde(default)]
    pub selected_llms: Option<Vec<String>>,
    /// The provider that writes the synthesis (default: the chat's).
    #[serde(default)]
    pub synthesis_llm: Option<String>,
    /// Reports the user adds as context for the synthesis.
    #[serde(default)]
    pub external_reports: Vec<ExternalReport>,
    /// The caller's saved stream the job researches for.
    #[serde(default)]
    pub stream_id: Option<String>,
}

/// The body of `POST /api/research`: the draft to start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ResearchStart"))]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    /// The draft's id.
    pub research_id: String,
}

/// The body of `POST /api/research/:id/confirm`: the user's answer to a partial failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ResearchConfirm"))]
#[serde(deny_unknown_fields)]
pub struct ConfirmRequest {
    /// Proceed with what succeeded, retry the failed providers, or cancel.
    pub action: ConfirmAction,
}

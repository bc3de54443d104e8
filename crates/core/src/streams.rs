//! Saved streams: a confirmed guided configuration kept under its owner, with a name and the
//! stream's `chat_instructions` for the assistant (chat-architecture.md "Stream
//! Instructions"). Edits go through the workflow's own validated field edits, all or nothing
//! (the workflow refuses emptying a required field).

use serde::{Deserialize, Serialize};

use crate::registry::StreamBrief;
use crate::workflow::{
    ActionError, Config, DONE_STEP, FieldValue, UserAction, WorkflowSpec, WorkflowState,
};

/// Longest stream name, in characters.
pub const MAX_STREAM_NAME_CHARS: usize = 120;
/// Longest `chat_instructions`, in characters.
pub const MAX_CHAT_INSTRUCTIONS_CHARS: usize = 4000;
/// Most field edits in one change.
pub const MAX_EDITS: usize = 20;

/// A saved stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedStream {
    /// Its id.
    pub id: String,
    /// Its owner's id.
    pub owner: String,
    /// Its name (from the purpose at first; editable).
    pub name: String,
    /// The workflow its configuration follows.
    pub workflow: String,
    /// The configuration.
    pub config: Config,
    /// Optional fields left out.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// Instructions added to the assistant's prompt when this stream is in view.
    #[serde(default)]
    pub chat_instructions: String,
    /// Creation time (ms since the epoch).
    pub created_at: u64,
    /// Last change (ms since the epoch).
    pub updated_at: u64,
    /// The guided conversation it was saved from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
}

/// A stream as its owner reads it (`GET /api/streams/:id`): every field but the owner's id, and
/// the search its Articles tab starts with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "SavedStream"))]
pub struct StreamView<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its name (from the purpose at first; editable).
    pub name: &'a str,
    /// The workflow its configuration follows.
    pub workflow: &'a str,
    /// The configuration.
    pub config: &'a Config,
    /// Optional fields left out.
    pub skipped: &'a [String],
    /// Instructions added to the assistant's prompt when this stream is in view.
    pub chat_instructions: &'a str,
    /// Creation time (ms since the epoch).
    pub created_at: u64,
    /// Last change (ms since the epoch).
    pub updated_at: u64,
    /// The guided conversation it was saved from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<&'a str>,
    /// The PubMed query its Articles tab starts with (its keywords and focus areas).
    pub default_query: String,
}

impl SavedStream {
    /// The stream as its owner reads it.
    pub fn view(&self) -> StreamView<'_> {
        StreamView {
            id: &self.id,
            name: &self.name,
            workflow: &self.workflow,
            config: &self.config,
            skipped: &self.skipped,
            chat_instructions: &self.chat_instructions,
            created_at: self.created_at,
            updated_at: self.updated_at,
            conversation_id: self.conversation_id.as_deref(),
            default_query: SavedStream::query_for(&self.config),
        }
    }
}

/// A change to a stream: any of a new name, new instructions and field edits.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StreamChange {
    /// A new name.
    #[serde(default)]
    pub name: Option<String>,
    /// New chat instructions (empty clears them).
    #[serde(default)]
    pub chat_instructions: Option<String>,
    /// Field edits, applied in order.
    #[serde(default)]
    pub edits: Vec<FieldEdit>,
}

/// One field's new value.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FieldEdit {
    /// The field.
    pub field: String,
    /// Its value.
    pub value: FieldValue,
}

/// Why a stream could not be saved or changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// The conversation's configuration is not confirmed yet.
    #[error("only a confirmed configuration can be saved; this conversation is at step `{0}`")]
    NotConfirmed(String),
    /// A name or instructions are not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// A field edit was refused (its own code; emptying a required field is refused too).
    #[error(transparent)]
    Action(#[from] ActionError),
}

impl StreamError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            StreamError::NotConfirmed(_) => "not_confirmed",
            StreamError::Invalid(_) => "invalid_stream",
            StreamError::Action(error) => error.code(),
        }
    }
}

impl SavedStream {
    /// A stream from a guided conversation's state, which must be confirmed (`done`).
    ///
    /// ```
    /// use stepwise_core::streams::SavedStream;
    /// use stepwise_core::workflow::{WorkflowSpec, WorkflowState};
    /// let spec = WorkflowSpec::builtin("research_stream").unwrap();
    /// let state = WorkflowState { current_step: "review".into(), ..Default::default() };
    /// let error = SavedStream::from_state(&spec, &state, "s1", "o1", None, 0).unwrap_err();
    /// assert_eq!(error.code(), "not_confirmed");
    /// ```
    pub fn from_state(
        spec: &WorkflowSpec,
        state: &WorkflowState,
        id: &str,
        owner: &str,
        conversation_id: Option<&str>,
        now: u64,
    ) -> Result<SavedStream, StreamError> {
        if state.current_step != DONE_STEP {
            return Err(StreamError::NotConfirmed(state.current_step.clone()));
        }
        let config = spec.normalize_config(&state.config)?;
        let purpose = match config.get("purpose") {
            Some(FieldValue::Text(text)) => text.as_str(),
            _ => "",
        };
        Ok(SavedStream {
            id: id.to_owned(),
            owner: owner.to_owned(),
            name: name_from(purpose, &spec.title),
            workflow: spec.id.clone(),
            config,
            skipped: state.skipped.clone(),
            chat_instructions: String::new(),
            created_at: now,
            updated_at: now,
            conversation_id: conversation_id.map(str::to_owned),
        })
    }

    /// The stream after `change`, or why not (the stream is unchanged either way).
    pub fn apply(
        &self,
        spec: &WorkflowSpec,
        change: &StreamChange,
        now: u64,
    ) -> Result<SavedStream, StreamError> {
        let mut next = self.clone();
        if let Some(name) = &change.name {
            let name = name.trim();
            if name.is_empty() || name.chars().count() > MAX_STREAM_NAME_CHARS {
                let why = format!("`name` must be 1 to {MAX_STREAM_NAME_CHARS} characters");
                return Err(StreamError::Invalid(why));
            }
            if name.chars().any(char::is_control) {
                return Err(StreamError::Invalid("`name` must be one line".into()));
            }
            next.name = name.to_owned();
        }
        if let Some(instructions) = &change.chat_instructions {
            if instructions.chars().count() > MAX_CHAT_INSTRUCTIONS_CHARS {
                let why = format!(
                    "`chat_instructions` must be at most {MAX_CHAT_INSTRUCTIONS_CHARS} characters"
                );
                return Err(StreamError::Invalid(why));
            }
            let control = |c: char| c.is_control() && c != '\n' && c != '\t';
            if instructions.chars().any(control) {
                let why = "`chat_instructions` may hold line breaks and tabs, no other control characters";
                return Err(StreamError::Invalid(why.into()));
            }
            next.chat_instructions = instructions.trim().to_owned();
        }
        if change.edits.len() > MAX_EDITS {
            let why = format!("at most {MAX_EDITS} field edits at once");
            return Err(StreamError::Invalid(why));
        }
        let mut state = WorkflowState {
            current_step: DONE_STEP.to_owned(),
            config: next.config,
            skipped: next.skipped,
        };
        for edit in &change.edits {
            let action = UserAction::FieldEdit {
                target_field: edit.field.clone(),
                value: edit.value.clone(),
            };
            state = spec.apply_action(&state, &action)?.0;
        }
        next.config = state.config;
        next.skipped = state.skipped;
        next.updated_at = now;
        Ok(next)
    }

    /// The Articles search a stream starts with: its keywords (any of them) and its focus
    /// areas (any of them), e.g. `(EGFR OR "PD-1") AND (Oncology)`.
    ///
    /// ```
    /// use stepwise_core::streams::SavedStream;
    /// use stepwise_core::workflow::{Config, FieldValue};
    /// let mut config = Config::new();
    /// config.insert("keywords".into(), FieldValue::List(vec!["EGFR".into(), "PD-1 inhibitor".into()]));
    /// config.insert("focus_areas".into(), FieldValue::List(vec!["Oncology".into()]));
    /// assert_eq!(SavedStream::query_for(&config), r#"(EGFR OR "PD-1 inhibitor") AND (Oncology)"#);
    /// ```
    pub fn query_for(config: &Config) -> String {
        let group = |field: &str| -> Option<String> {
            let Some(FieldValue::List(items)) = config.get(field) else {
                return None;
            };
            let terms: Vec<String> = items
                .iter()
                .map(|item| item.replace('"', ""))
                .filter(|item| !item.trim().is_empty())
                .map(|item| {
                    if item.bytes().all(|b| b.is_ascii_alphanumeric()) {
                        item
                    } else {
                        format!("\"{item}\"")
                    }
                })
                .collect();
            (!terms.is_empty()).then(|| format!("({})", terms.join(" OR ")))
        };
        [group("keywords"), group("focus_areas")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    /// The stream as the assistant's prompt names it.
    pub fn brief(&self) -> StreamBrief<'_> {
        StreamBrief {
            name: &self.name,
            chat_instructions: &self.chat_instructions,
        }
    }
}

/// A name from the purpose's first sentence, cut at a word to fit.
fn name_from(purpose: &str, fallback: &str) -> String {
    let sentence = purpose.split(['.', '\n']).next().unwrap_or("").trim();
    if sentence.is_empty() {
        return fallback.chars().take(MAX_STREAM_NAME_CHARS).collect();
    }
    if sentence.chars().count() <= 60 {
        return sentence.to_owned();
    }
    let mut name = String::new();
    for word in sentence.split_whitespace() {
        if name.chars().count() + word.chars().count() + 1 > 60 {
            break;
        }
        if !name.is_empty() {
            name.push(' ');
        }
        name.push_str(word);
    }
    if name.is_empty() {
        name = sentence.chars().take(60).collect();
    }
    name + "…"
}

//! Wire types shared by the browser, the Worker and tests: chat requests, responses and SSE events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::AssistantResponse;
use crate::markers::{Payload, SuggestedAction, SuggestedValue};
use crate::workflow::{Config, UserAction};

/// Who wrote a message of the conversation. Clients cannot send system messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
}

/// One message of the conversation history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// What was written.
    pub content: String,
    /// An answer cut short: `stopped` by its owner, or `interrupted` when its turn died
    /// (absent for a whole message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<EntryStatus>,
}

impl ChatMessage {
    /// A whole message of `role`.
    pub fn new(role: Role, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role,
            content: content.into(),
            status: None,
        }
    }
}

/// Where a message stands: a deferred turn's user message waiting or answered, or an answer
/// cut short (stopped by its owner, or interrupted when its turn died).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// Its turn waits for context (`waiting_context`).
    WaitingContext,
    /// It was answered after the wait.
    Answered,
    /// An answer cut short by the owner's Stop: what was generated until then.
    Stopped,
    /// An answer cut short because its turn died (a deploy, an eviction, a crash): what was
    /// generated until then.
    Interrupted,
}

/// A chat turn as the browser sends it (guided-workflow.md §1, plus `skipped` for recovery).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ChatRequest {
    /// The conversation this turn belongs to (absent on the first turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The count of turns this turn builds on (the last response's `turns`); required with
    /// `conversation_id`. A stale count (another tab took a turn) is refused with 409.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// The workflow id (default `research_stream`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// A configured provider's name to answer this turn (default: the server's `LLM_PROVIDER`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// What the user typed or the label of what they clicked.
    #[serde(default)]
    pub message: String,
    /// The step from the last response's `next_step`; inferred from the config when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_step: Option<String>,
    /// The fields collected so far.
    #[serde(default)]
    pub current_config: Config,
    /// The conversation so far, oldest first.
    #[serde(default)]
    pub conversation_history: Vec<ChatMessage>,
    /// What the user did; absent means `text_input` (spec §9, migration path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_action: Option<UserAction>,
    /// Optional fields the user skipped (from the last response).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// The body of `POST /api/assistant`: a message for the page-aware assistant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AssistantRequest {
    /// The conversation to continue; a new one when absent.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// What the user wrote.
    pub message: String,
    /// What the page shows (`ChatContext`).
    #[cfg_attr(feature = "schema", schemars(with = "crate::registry::ChatContext"))]
    pub context: Value,
    /// A configured provider's name (default: the server's `LLM_PROVIDER`).
    #[serde(default)]
    pub provider: Option<String>,
    /// A writing style of the page's prompt sheet, kept for the conversation's next turns.
    #[serde(default)]
    pub writing_style: Option<String>,
}

/// The body of `POST /api/assistant/actions`: a server action a suggested action named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AssistantActionRequest {
    /// The conversation to continue; a new one when absent.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// The server action's name.
    pub action: String,
    /// What it acts on (an id, a page, a question).
    #[serde(default)]
    pub target: Option<String>,
    /// Its button's label (the action's name when absent).
    #[serde(default)]
    pub label: Option<String>,
    /// What the page shows (`ChatContext`).
    #[cfg_attr(feature = "schema", schemars(with = "crate::registry::ChatContext"))]
    pub context: Value,
}

/// One checkbox of a multi-select question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CheckboxOption {
    /// Text shown.
    pub label: String,
    /// Value sent in `selected_values`.
    pub value: String,
    /// Whether the value is already in the config.
    pub checked: bool,
}

/// A machine code and a human message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorBody {
    /// Stable machine code.
    pub code: String,
    /// Human explanation.
    pub message: String,
}

/// The answer to a chat turn (guided-workflow.md §5).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChatResponse {
    /// The assistant's message, marker lines removed.
    pub message: String,
    /// The step the next request must use.
    pub next_step: String,
    /// The config after this turn.
    pub updated_config: Config,
    /// The field the next question is about (absent at review and when done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_field: Option<String>,
    /// Single-select chips (send `option_selected`).
    #[serde(default)]
    pub suggestions: Vec<String>,
    /// Multi-select checkboxes (send `options_selected`).
    #[serde(default)]
    pub options: Vec<CheckboxOption>,
    /// Label of the Continue button for the checkboxes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_message: Option<String>,
    /// Why the turn was rejected; nothing changed when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// Optional fields the user skipped.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// Chips that send a prepared message (chat-architecture.md §4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_values: Vec<SuggestedValue>,
    /// Action buttons (chat-architecture.md §4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_actions: Vec<SuggestedAction>,
    /// Registered payloads the model produced (chat-architecture.md §3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payloads: Vec<Payload>,
    /// The conversation id, set by the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The conversation's access token, sent once, on its first turn (`X-Conversation-Token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_token: Option<String>,
    /// Turns the conversation holds with this one (send it back as the next request's `turns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
}

/// Server-Sent Events of a streamed turn (chat-architecture.md §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// Progress note, e.g. "Thinking...".
    Status {
        /// The note.
        message: String,
    },
    /// Display text (never marker syntax).
    TextDelta {
        /// The text.
        text: String,
    },
    /// The model's own text, marker lines included, sent instead of `text_delta` to clients
    /// that parse markers themselves (the browser package's `MarkerStream`); requested with
    /// the header `x-stepwise-deltas: model`. The `complete` event stays authoritative.
    ModelDelta {
        /// The text as the model wrote it.
        text: String,
    },
    /// A tool started.
    ToolStart {
        /// Tool name.
        tool: String,
        /// Its input.
        input: Value,
        /// The model's call id, for a call that was held for approval and now runs: clients
        /// that showed it awaiting approval attach its result to it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// A tool reports progress.
    ToolProgress {
        /// Tool name.
        tool: String,
        /// Stage name (`searching`, `fetching_summaries`...).
        stage: String,
        /// What it is doing, for people.
        message: String,
        /// 0.0 to 1.0.
        progress: f64,
    },
    /// A tool finished.
    ToolComplete {
        /// Tool name.
        tool: String,
        /// Index of the call within the turn.
        index: u32,
    },
    /// The turn waits for context (context-handshake.md §4.1.3): nothing is answered until
    /// the request's required slots are supplied, skipped, forced, or its SLA passes.
    ContextRequired {
        /// What the client needs to show and answer the request.
        payload: Box<ContextRequired>,
    },
    /// The model called a tool that waits for the owner's approval: the turn ends with it (the
    /// `complete` event follows, its answer carrying the same approval). Decided with `POST
    /// /api/assistant/conversations/:id/approvals/:approval_id`.
    ApprovalRequired {
        /// The held call: tool, arguments, what it will do, estimated model calls, deadline.
        approval: Box<crate::approval::Approval>,
    },
    /// The turn's authoritative response.
    Complete {
        /// The response.
        payload: Box<TurnAnswer>,
    },
    /// The turn failed.
    Error {
        /// Stable machine code.
        code: String,
        /// Human explanation.
        message: String,
    },
    /// The owner stopped the turn: the upstream call was aborted and what was generated until
    /// then is stored, marked `stopped`. Sent to every client of the turn; the stream ends.
    Stopped {
        /// The partial answer's display text, as stored.
        message: String,
    },
}

/// A deferred turn's answer: `status` is `context_required`; `required` lists the slots still
/// open; `request` is the whole request (with what was filled automatically).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextRequired {
    /// Always `context_required`.
    pub status: String,
    /// The conversation.
    pub conversation_id: String,
    /// The user message held back.
    pub user_message_id: String,
    /// The request.
    pub request_id: String,
    /// The slots the user is asked for.
    pub required: Vec<crate::handshake::Slot>,
    /// The request, whole.
    pub request: crate::handshake::ContextRequest,
}

impl ContextRequired {
    /// The answer of a deferred turn of `conversation_id`.
    pub fn of(conversation_id: &str, request: &crate::handshake::ContextRequest) -> Self {
        ContextRequired {
            status: "context_required".to_owned(),
            conversation_id: conversation_id.to_owned(),
            user_message_id: request.user_message_id.clone(),
            request_id: request.request_id.clone(),
            required: request.slots.iter().filter(|s| !s.met()).cloned().collect(),
            request: request.clone(),
        }
    }
}

/// The answer a `complete` event carries: a guided turn's or an assistant turn's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum TurnAnswer {
    /// A guided workflow turn (guided-workflow.md §5).
    Guided(ChatResponse),
    /// An assistant turn (`ChatResponsePayload`, chat-architecture.md §5).
    Assistant(AssistantResponse),
}

impl From<ChatResponse> for TurnAnswer {
    fn from(response: ChatResponse) -> Self {
        TurnAnswer::Guided(response)
    }
}

impl From<AssistantResponse> for TurnAnswer {
    fn from(response: AssistantResponse) -> Self {
        TurnAnswer::Assistant(response)
    }
}

impl StreamEvent {
    /// The event's `type` name, used as the SSE `event:` field.
    pub fn name(&self) -> &'static str {
        match self {
            StreamEvent::Status { .. } => "status",
            StreamEvent::TextDelta { .. } => "text_delta",
            StreamEvent::ModelDelta { .. } => "model_delta",
            StreamEvent::ToolStart { .. } => "tool_start",
            StreamEvent::ToolProgress { .. } => "tool_progress",
            StreamEvent::ToolComplete { .. } => "tool_complete",
            StreamEvent::ContextRequired { .. } => "context_required",
            StreamEvent::ApprovalRequired { .. } => "approval_required",
            StreamEvent::Complete { .. } => "complete",
            StreamEvent::Error { .. } => "error",
            StreamEvent::Stopped { .. } => "stopped",
        }
    }

    /// The event as one SSE frame: `id`, `event`, and its JSON as `data`. A payload's JSON
    /// text may span lines; each line becomes its own `data:` line, which an SSE client joins
    /// back with `\n` (still the same JSON).
    ///
    /// ```
    /// use stepwise_core::protocol::StreamEvent;
    /// let frame = StreamEvent::TextDelta { text: "Hi\n".into() }.to_sse(3);
    /// assert_eq!(frame, "id: 3\nevent: text_delta\ndata: {\"type\":\"text_delta\",\"text\":\"Hi\\n\"}\n\n");
    /// ```
    pub fn to_sse(&self, id: u64) -> String {
        let data = serde_json::to_string(self).expect("stream events serialize");
        // Line breaks can only be JSON whitespace here (serde_json escapes them in strings).
        crate::sse::frame(id, self.name(), &data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::MarkerParser;
    use crate::markers::MarkerRegistry;

    #[test]
    fn a_multi_line_payload_is_framed_as_several_data_lines_that_rejoin_to_the_same_json() {
        let mut registry = MarkerRegistry::new();
        registry.register_payload("SCHEMA_PROPOSAL").unwrap();
        let mut parser = MarkerParser::with_registry(registry);
        parser.feed("SCHEMA_PROPOSAL: {\r\n \"a\": [1,\r 2],\n \"b\": \"x\\ny\"\n}\n");
        let payloads = parser.finish().payloads;
        let response = ChatResponse {
            payloads,
            ..ChatResponse::default()
        };
        let event = StreamEvent::Complete {
            payload: Box::new(response.into()),
        };
        let frame = event.to_sse(7);
        let data: Vec<&str> = frame
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        assert!(data.len() > 1);
        assert!(frame.ends_with("\n\n") && !frame[..frame.len() - 2].contains("\n\n"));
        let rejoined: serde_json::Value = serde_json::from_str(&data.join("\n")).unwrap();
        assert_eq!(
            rejoined["payload"]["payloads"][0]["data"],
            serde_json::json!({"a": [1, 2], "b": "x\ny"})
        );
    }
}

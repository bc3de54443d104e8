//! The end of an assistant turn: the model's parsed answer and the agent's tool results become
//! the spec's `ChatResponsePayload` (§5). The model only proposes: a payload that fails its
//! schema, and a suggested action the page does not offer, are dropped with a [`Note`] (a
//! diagnostic the client may show), never sent as a broken card or a dead button.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Agent, ToolUse};
use crate::approval::Approval;
use crate::json::check_schema;
use crate::markers::{ActionHandler, Parsed, Payload, SuggestedAction, SuggestedValue};
use crate::registry::Resolution;

/// Something of the answer that was dropped or ignored, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "AssistantNote"))]
pub struct Note {
    /// Stable machine code (`invalid_payload`, `unknown_action`, a parser diagnostic's code...).
    pub code: String,
    /// Human explanation.
    pub message: String,
}

/// The answer of an assistant turn (`ChatResponsePayload`, spec §5).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AssistantResponse {
    /// The assistant's text, marker lines removed.
    pub message: String,
    /// The main card: the model's payload, or else the last tool payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_payload: Option<Payload>,
    /// Every payload of the turn, tool payloads first, each checked against its schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payloads: Vec<Payload>,
    /// Chips that send their `value` as the next message.
    #[serde(default)]
    pub suggested_values: Vec<SuggestedValue>,
    /// Action buttons, each an action the page offers.
    #[serde(default)]
    pub suggested_actions: Vec<SuggestedAction>,
    /// The tools called this turn.
    #[serde(default)]
    pub tool_history: Vec<ToolUse>,
    /// The conversation, set by the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The answer's index among the conversation's stored messages, set by the server once it
    /// is stored: its payload cards' outcomes are kept by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_index: Option<usize>,
    /// What was dropped, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Note>,
    /// A tool call held for the owner's approval: the turn ended there, and the call runs only
    /// once approved (`POST /api/assistant/conversations/:id/approvals/:approval_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

impl AssistantResponse {
    /// Takes every payload of type `payload_type` out of the answer, the main card included
    /// (which becomes the last payload left): the last one taken, if any. A payload the server
    /// acts on itself (`context_request`) is never shown as a card.
    ///
    /// ```
    /// use stepwise_core::agent::AssistantResponse;
    /// use stepwise_core::json::JsonText;
    /// use stepwise_core::markers::Payload;
    /// let card = Payload { payload_type: "context_request".into(), data: JsonText::parse("{}").unwrap() };
    /// let mut answer = AssistantResponse { custom_payload: Some(card.clone()), payloads: vec![card], ..Default::default() };
    /// assert!(answer.take_payloads("context_request").is_some());
    /// assert_eq!((answer.custom_payload, answer.payloads.len()), (None, 0));
    /// ```
    pub fn take_payloads(&mut self, payload_type: &str) -> Option<Payload> {
        let mut taken = None;
        self.payloads.retain(|p| {
            let keep = p.payload_type != payload_type;
            if !keep {
                taken = Some(p.clone());
            }
            keep
        });
        self.custom_payload = self.payloads.last().cloned();
        taken
    }

    /// Adds a diagnostic: something of the answer that was ignored, and why.
    pub fn note(&mut self, code: &str, message: impl Into<String>) {
        self.diagnostics.push(Note {
            code: code.into(),
            message: message.into(),
        });
    }
}

/// Builds the turn's answer from the model's parsed text and the agent's results.
pub fn finish(resolution: &Resolution<'_>, parsed: Parsed, agent: Agent<'_>) -> AssistantResponse {
    let (tool_history, mut payloads, mut diagnostics, approval) = agent.into_results();
    let tool_payloads = payloads.len();
    for diagnostic in parsed.diagnostics {
        diagnostics.push(Note {
            code: diagnostic.code.as_str().into(),
            message: diagnostic.message,
        });
    }
    for payload in parsed.payloads {
        match check_model_payload(resolution, &payload) {
            Ok(()) => payloads.push(payload),
            Err(why) => diagnostics.push(Note {
                code: "invalid_payload".into(),
                message: format!("`{}` dropped: {why}", payload.payload_type),
            }),
        }
    }
    let custom_payload = payloads.last().cloned();
    if payloads.len() > tool_payloads + 1 {
        diagnostics.push(Note {
            code: "several_payloads".into(),
            message: "the answer held more than one payload; the last is the main card".into(),
        });
    }
    let mut suggested_actions = Vec::new();
    for action in parsed.suggested_actions {
        let offered = match action.handler {
            ActionHandler::Client => resolution.has_client_action(&action.action),
            ActionHandler::Server => resolution.has_server_action(&action.action),
        };
        if offered && !action.label.trim().is_empty() {
            suggested_actions.push(action);
        } else {
            diagnostics.push(Note {
                code: "unknown_action".into(),
                message: format!(
                    "action `{}` ({}) is not offered here; dropped",
                    action.action,
                    action.handler.as_str()
                ),
            });
        }
    }
    let suggested_values = parsed
        .suggested_values
        .into_iter()
        .filter(|v| !v.label.trim().is_empty() && !v.value.trim().is_empty())
        .collect();
    AssistantResponse {
        custom_payload,
        payloads,
        suggested_values,
        suggested_actions,
        tool_history,
        conversation_id: None,
        message_index: None,
        diagnostics,
        message: match (&approval, parsed.message.trim()) {
            (Some(held), "") => {
                format!("I'd like to do this, with your approval: {}", held.summary)
            }
            _ => parsed.message,
        },
        approval,
    }
}

fn check_model_payload(resolution: &Resolution<'_>, payload: &Payload) -> Result<(), String> {
    let payload_type = resolution
        .payload(&payload.payload_type)
        .ok_or("not available on this page")?;
    let data: Value = serde_json::from_str(payload.data.as_str()).map_err(|e| e.to_string())?;
    check_schema(&data, &payload_type.schema).map_err(|why| why.to_string())
}

//! Native tool calling: the tools offered to a model, the calls it makes (decoded from its
//! stream by [`StreamDecoder`](super::StreamDecoder)), and the rounds of calls and replies of the
//! current turn that go back to it in the next request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool as a model is offered it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolSpec<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// What it does, for the model.
    pub description: &'a str,
    /// JSON Schema of its input (an object).
    pub parameters: &'a Value,
}

/// A call a model made: the tool's name and its arguments as the JSON text the model wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id (the provider's, or `call_<n>` for providers that give none).
    pub id: String,
    /// The tool named.
    pub name: String,
    /// The arguments as written (`{}` when the model wrote none).
    pub arguments: String,
    /// The arguments are not valid JSON (checked while they streamed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub malformed: bool,
}

impl ToolCall {
    /// The arguments as JSON, `None` when they are malformed or not an object.
    pub fn input(&self) -> Option<Value> {
        if self.malformed {
            return None;
        }
        serde_json::from_str::<Value>(&self.arguments)
            .ok()
            .filter(Value::is_object)
    }
}

/// A tool's reply to one call, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolReply {
    /// The call answered.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The text the model reads.
    pub content: String,
    /// The call failed (unknown tool, bad arguments, the tool's own failure or timeout).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// One round of the current turn: what the model wrote, the calls it made, and their replies.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Round {
    /// The model's text before its calls.
    pub text: String,
    /// Its calls.
    pub calls: Vec<ToolCall>,
    /// Their replies, in the calls' order.
    pub replies: Vec<ToolReply>,
}

impl Round {
    /// The bytes of text this round adds to every later request of the turn (for estimating
    /// what a model call costs).
    pub fn prompt_bytes(&self) -> usize {
        let calls: usize = self
            .calls
            .iter()
            .map(|c| c.id.len() + c.name.len() + c.arguments.len())
            .sum();
        let replies: usize = self.replies.iter().map(|r| r.content.len()).sum();
        self.text.len() + calls + replies
    }
}

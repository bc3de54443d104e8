//! What the offline provider answers in one model call of the assistant: text in the marker
//! format and the tools it calls.

use serde_json::Value;

use super::OFFLINE_LABEL;
use crate::llm::ToolCall;

/// What the offline assistant answers in one model call: text in the marker format, and the
/// tools it calls.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OfflineAnswer {
    /// The text.
    pub text: String,
    /// Tool calls (none when `answer_now`).
    pub calls: Vec<ToolCall>,
}

impl From<String> for OfflineAnswer {
    /// A plain text answer.
    fn from(text: String) -> Self {
        OfflineAnswer {
            text,
            calls: Vec::new(),
        }
    }
}

/// An answer that calls `name` once per input.
pub(super) fn calls(name: &str, inputs: Vec<Value>) -> OfflineAnswer {
    let calls: Vec<ToolCall> = inputs
        .into_iter()
        .enumerate()
        .map(|(i, input)| ToolCall {
            id: format!("offline_{}", i + 1),
            name: name.into(),
            arguments: input.to_string(),
            malformed: false,
        })
        .collect();
    let times = match calls.len() {
        1 => String::new(),
        n => format!(" {n} times"),
    };
    OfflineAnswer {
        text: format!("{OFFLINE_LABEL} Calling `{name}`{times}."),
        calls,
    }
}

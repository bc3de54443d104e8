//! Other ecosystems' stream dialects, spoken from the same turn events: the Vercel AI SDK's UI
//! message stream ([`ui_message`]) and AG-UI ([`agui`]). Each encoder turns the
//! [`StreamEvent`](crate::protocol::StreamEvent)s of one turn, in order, into that dialect's
//! Server-Sent Events; the Worker picks one per request and writes what it returns.

pub mod agui;
pub mod ui_message;

use serde_json::{Map, Value, json};

use crate::protocol::TurnAnswer;

/// One SSE frame with only a `data:` line (both dialects frame every event this way).
fn data_frame(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// The text parts of one turn's message: a part opens at the first text after the start or
/// after a tool call, and closes before a tool call or at the end. Both dialects number parts
/// the same way; `name` gives the n-th part (from 1) its id.
#[derive(Debug)]
struct TextParts {
    name: fn(&str, u32) -> String,
    base: String,
    open: Option<String>,
    count: u32,
    sent: bool,
}

impl TextParts {
    fn new(base: &str, name: fn(&str, u32) -> String) -> Self {
        TextParts {
            name,
            base: base.to_owned(),
            open: None,
            count: 0,
            sent: false,
        }
    }

    /// The id of the part `text` goes to, and whether it was just opened (`None` for no text).
    fn write(&mut self, text: &str) -> Option<(String, bool)> {
        if text.is_empty() {
            return None;
        }
        self.sent = true;
        if let Some(id) = &self.open {
            return Some((id.clone(), false));
        }
        self.count += 1;
        let id = (self.name)(&self.base, self.count);
        self.open = Some(id.clone());
        Some((id, true))
    }

    /// The id of the part to close, if one is open.
    fn close(&mut self) -> Option<String> {
        self.open.take()
    }

    /// Whether any text was written (an answer that streamed none sends its message at the end).
    fn sent(&self) -> bool {
        self.sent
    }
}

/// What a client of another dialect needs of a turn's answer, as one JSON object: the guided
/// state (`step`, `config`, `skipped`), the chips and checkboxes, payloads, suggested values and
/// actions, and the conversation's handles, with `kind` telling a guided answer from the
/// assistant's. Absent lists are left out.
pub fn answer_data(answer: &TurnAnswer) -> Value {
    let mut data = Map::new();
    match answer {
        TurnAnswer::Guided(response) => {
            data.insert("kind".into(), json!("guided"));
            data.insert("step".into(), json!(response.next_step));
            data.insert("config".into(), json!(response.updated_config));
            data.insert("skipped".into(), json!(response.skipped));
            data.insert("suggestions".into(), json!(response.suggestions));
            data.insert("options".into(), json!(response.options));
            insert_some(&mut data, "target_field", &response.target_field);
            insert_some(&mut data, "proposed_message", &response.proposed_message);
            insert_some(&mut data, "error", &response.error);
            insert_list(&mut data, "payloads", &response.payloads);
            insert_list(&mut data, "suggested_values", &response.suggested_values);
            insert_list(&mut data, "suggested_actions", &response.suggested_actions);
            insert_some(&mut data, "conversation_id", &response.conversation_id);
            insert_some(
                &mut data,
                "conversation_token",
                &response.conversation_token,
            );
            insert_some(&mut data, "turns", &response.turns);
        }
        TurnAnswer::Assistant(response) => {
            data.insert("kind".into(), json!("assistant"));
            insert_list(&mut data, "payloads", &response.payloads);
            insert_some(&mut data, "custom_payload", &response.custom_payload);
            insert_list(&mut data, "suggested_values", &response.suggested_values);
            insert_list(&mut data, "suggested_actions", &response.suggested_actions);
            insert_list(&mut data, "tool_history", &response.tool_history);
            insert_some(&mut data, "conversation_id", &response.conversation_id);
        }
    }
    Value::Object(data)
}

fn insert_some<T: serde::Serialize>(data: &mut Map<String, Value>, key: &str, value: &Option<T>) {
    if let Some(value) = value {
        data.insert(key.into(), json!(value));
    }
}

fn insert_list<T: serde::Serialize>(data: &mut Map<String, Value>, key: &str, list: &[T]) {
    if !list.is_empty() {
        data.insert(key.into(), json!(list));
    }
}

/// The display text of a turn's answer (what a client that saw no deltas shows).
fn answer_message(answer: &TurnAnswer) -> &str {
    match answer {
        TurnAnswer::Guided(response) => &response.message,
        TurnAnswer::Assistant(response) => &response.message,
    }
}

/// The tool calls that ran in a turn, each with its id in the dialect and, once it finished,
/// its index in the answer's `tool_history` (which also holds the calls the agent refused,
/// which never start: results are matched by that index, not by position).
#[derive(Debug, Default)]
struct ToolCalls {
    calls: Vec<(String, Option<u32>)>,
}

impl ToolCalls {
    /// How many calls started.
    fn len(&self) -> usize {
        self.calls.len()
    }

    /// A call started, with this id.
    fn start(&mut self, id: String) {
        self.calls.push((id, None));
    }

    /// The last call that started finished, as entry `index` of the tool history.
    fn finish(&mut self, index: u32) {
        if let Some((_, slot @ None)) = self.calls.last_mut() {
            *slot = Some(index);
        }
    }

    /// The calls that ran, with what each returned.
    fn results<'a>(
        &'a self,
        answer: &'a TurnAnswer,
    ) -> impl Iterator<Item = (&'a str, &'a crate::agent::ToolUse)> + 'a {
        let history = match answer {
            TurnAnswer::Guided(_) => &[][..],
            TurnAnswer::Assistant(response) => &response.tool_history[..],
        };
        self.calls.iter().filter_map(move |(id, index)| {
            let used = history.get(usize::try_from((*index)?).ok()?)?;
            Some((id.as_str(), used))
        })
    }
}

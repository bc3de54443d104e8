//! The conversation as the model reads it on the next turn: the newest messages that fit a
//! character budget, oldest first, each answer followed by a line naming the tools it used and
//! the cards it showed (their data stays in the record; tools fetch again what is needed).

use super::Entry;
use crate::protocol::{ChatMessage, Role};

/// Characters of earlier messages given to the model at most.
pub const MAX_HISTORY_CHARS: usize = 24_000;

/// The newest entries that fit `budget` characters, as model messages, oldest first; the
/// history never starts with an answer.
///
/// ```
/// use stepwise_core::conversation::{model_history, Entry};
/// let entries = vec![Entry::user("Hi", 1, None), Entry::user("Again", 2, None)];
/// assert_eq!(model_history(&entries, 100).len(), 2);
/// assert_eq!(model_history(&entries, 6).len(), 1);
/// ```
pub fn model_history(entries: &[Entry], budget: usize) -> Vec<ChatMessage> {
    let mut messages = Vec::new();
    let mut used = 0;
    for entry in entries.iter().rev() {
        if entry.status == Some(super::EntryStatus::WaitingContext) {
            // Its turn carries it as the latest message.
            continue;
        }
        let content = content_of(entry);
        used += content.chars().count();
        if used > budget {
            break;
        }
        messages.push(ChatMessage {
            role: entry.role,
            content,
        });
    }
    while messages.last().is_some_and(|m| m.role == Role::Assistant) {
        messages.pop();
    }
    messages.reverse();
    messages
}

fn content_of(entry: &Entry) -> String {
    let mut content = match &entry.action {
        Some(action) => format!("(clicked the action `{action}`) {}", entry.content),
        None => entry.content.clone(),
    };
    // An answer cut short says so (and is never empty: providers refuse empty messages).
    let cut = match entry.status {
        Some(super::EntryStatus::Stopped) => Some("(this answer was stopped by the user here)"),
        Some(super::EntryStatus::Interrupted) => Some("(this answer was interrupted here)"),
        _ => None,
    };
    if let Some(cut) = cut {
        if !content.is_empty() {
            content.push('\n');
        }
        content.push_str(cut);
    }
    let tools: Vec<&str> = entry
        .tool_history
        .iter()
        .map(|t| t.tool_name.as_str())
        .collect();
    if !tools.is_empty() {
        content.push_str(&format!("\n(tools used: {})", tools.join(", ")));
    }
    let cards: Vec<&str> = entry
        .payloads
        .iter()
        .map(|p| p.payload_type.as_str())
        .collect();
    if !cards.is_empty() {
        content.push_str(&format!("\n(cards shown: {})", cards.join(", ")));
    }
    if let Some(approval) = &entry.approval {
        content.push('\n');
        content.push_str(&approval.history_line());
    }
    content
}

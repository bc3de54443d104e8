//! The conversation as the model reads it on the next turn: the newest messages that fit a
//! character budget, oldest first, each answer followed by a line naming the tools it used and
//! the cards it showed (their data stays in the record; tools fetch again what is needed); a
//! long conversation's earlier messages compacted into a digest, one line each, before them.

use super::Entry;
use crate::protocol::{ChatMessage, Role};

/// Characters of earlier messages given to the model at most.
pub const MAX_HISTORY_CHARS: usize = 24_000;
/// Most characters of the digest that sums up a long conversation's earlier messages (a
/// quarter of the budget when that is less).
pub const MAX_DIGEST_CHARS: usize = 4_000;
/// Most characters of one message's line in the digest.
const DIGEST_LINE_CHARS: usize = 160;
/// Characters kept for the digest's opening line, its closing parenthesis and the blank line
/// after it.
const DIGEST_FRAME_CHARS: usize = 96;

/// The newest entries that fit `budget` characters, as model messages, oldest first; the
/// history never starts with an answer. When earlier messages do not fit, the newest of them
/// are summed up one line each (at most [`super::DIGEST_WINDOW`] lines and
/// [`MAX_DIGEST_CHARS`]) at the head of the first message, within the same budget: the model
/// knows what came before, while the stored transcript stays whole.
///
/// ```
/// use stepwise_core::conversation::{model_history, Entry};
/// let entries: Vec<Entry> = (0..16u8)
///     .map(|i| Entry::user(&char::from(b'a' + i).to_string().repeat(50), i.into(), None))
///     .collect();
/// assert_eq!(model_history(&entries, 1_000).len(), 16);
/// let long = model_history(&entries, 640);
/// assert_eq!(long.len(), 9);
/// assert!(long[0].content.starts_with("(Earlier in this conversation, after 6 older messages"));
/// assert!(long[0].content.ends_with(&"h".repeat(50)));
/// ```
pub fn model_history(entries: &[Entry], budget: usize) -> Vec<ChatMessage> {
    history_after(entries, 0, budget)
}

/// [`model_history`] of `entries`, which come after `earlier` messages not held.
pub(super) fn history_after(entries: &[Entry], earlier: usize, budget: usize) -> Vec<ChatMessage> {
    let (from, whole) = tail(entries, budget);
    if from == 0 && earlier == 0 {
        return whole;
    }
    let digest_budget = MAX_DIGEST_CHARS.min(budget / 4);
    let (from, mut messages) = tail(entries, budget - digest_budget);
    let digest = digest(&entries[..from], earlier, digest_budget);
    if let (Some(first), Some(digest)) = (messages.first_mut(), digest) {
        first.content = format!("{digest}\n\n{}", first.content);
    }
    messages
}

/// The newest entries that fit `budget` characters as model messages, oldest first and never
/// starting with an answer, and the index of the first one read (`entries.len()` for none).
pub(super) fn tail(entries: &[Entry], budget: usize) -> (usize, Vec<ChatMessage>) {
    let mut messages = Vec::new();
    let mut from = entries.len();
    let mut used = 0;
    for (at, entry) in entries.iter().enumerate().rev() {
        if entry.status == Some(super::EntryStatus::WaitingContext) {
            // Its turn carries it as the latest message.
            continue;
        }
        let content = content_of(entry);
        used += content.chars().count();
        if used > budget {
            break;
        }
        messages.push((at, ChatMessage::new(entry.role, content)));
    }
    while messages
        .last()
        .is_some_and(|(_, m)| m.role == Role::Assistant)
    {
        messages.pop();
    }
    if let Some((at, _)) = messages.last() {
        from = *at;
    }
    messages.reverse();
    (from, messages.into_iter().map(|(_, m)| m).collect())
}

/// One line a message for the newest of `before` (which follow `earlier` messages not held),
/// within `budget` characters; `None` when not even one line fits.
fn digest(before: &[Entry], earlier: usize, budget: usize) -> Option<String> {
    let mut lines = Vec::new();
    let mut used = DIGEST_FRAME_CHARS;
    let mut oldest = before.len();
    for (at, entry) in before.iter().enumerate().rev() {
        if lines.len() == super::DIGEST_WINDOW {
            break;
        }
        if entry.status == Some(super::EntryStatus::WaitingContext) {
            continue;
        }
        let line = digest_line(entry);
        used += line.chars().count() + 1;
        if used > budget {
            break;
        }
        lines.push(line);
        oldest = at;
    }
    if lines.is_empty() {
        return None;
    }
    lines.reverse();
    let left_out = earlier + oldest;
    let head = match left_out {
        0 => "(Earlier in this conversation, one line a message:".to_owned(),
        n => {
            format!("(Earlier in this conversation, after {n} older messages, one line a message:")
        }
    };
    Some(format!("{head}\n{})", lines.join("\n")))
}

fn digest_line(entry: &Entry) -> String {
    let who = match entry.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let words = entry
        .content
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut text: String = words.chars().take(DIGEST_LINE_CHARS).collect();
    if text.len() < words.len() {
        text.push('…');
    }
    if let Some(action) = &entry.action {
        text = format!("(clicked `{action}`) {text}");
    }
    format!("- {who}: {text}")
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

//! Views of a conversation for one turn: the header with only the newest messages and requests
//! a turn can read, so what a turn is handed stays the same size however long the conversation
//! grows. The model's history read from a view equals the one read from the whole record.

use super::history::{history_after, tail};
use super::{Conversation, EntryStatus};
use crate::handshake::carried_window;

/// Most characters of earlier messages an assistant turn may give the model (a larger
/// `HISTORY_BUDGET_CHARS` is cut to it): what a turn's view holds besides the digest's window.
pub const MAX_TURN_HISTORY_CHARS: usize = 48_000;
/// Most earlier messages, before the ones the model reads whole, that the digest of a long
/// conversation sums up one line each.
pub const DIGEST_WINDOW: usize = 40;

impl Conversation {
    /// How many messages the conversation has (in a view, counting those it leaves out).
    pub fn message_count(&self) -> usize {
        self.entries_from as usize + self.entries.len()
    }

    /// The conversation as a turn reads it: every header field, the messages the model may read
    /// (within [`MAX_TURN_HISTORY_CHARS`], with the digest's window before them, and the message
    /// holding the approval the turn runs), and the requests whose supplies may be carried.
    ///
    /// ```
    /// use stepwise_core::conversation::{handle, Command, Entry};
    /// let start = Command::BeginAssistant { message: "Hi".into(), start: true, lease_ms: 60_000 };
    /// let mut record = handle(None, "c1", "o1", &start, 10).unwrap().record.unwrap();
    /// record.running = None;
    /// for at in 0..500 {
    ///     record.entries.push(Entry::user(&"words ".repeat(100), at, None));
    /// }
    /// let view = record.for_turn();
    /// assert!(view.entries.len() < 300);
    /// assert_eq!(view.message_count(), 500);
    /// assert_eq!(view.model_history(24_000), record.model_history(24_000));
    /// ```
    pub fn for_turn(&self) -> Conversation {
        let (read_from, _) = tail(&self.entries, MAX_TURN_HISTORY_CHARS);
        // The digest's window: 40 messages before, not counting waiting ones (it skips them).
        let mut from = self.entries[..read_from]
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, e)| e.status != Some(EntryStatus::WaitingContext))
            .nth(DIGEST_WINDOW - 1)
            .map_or(0, |(at, _)| at);
        if let Some(approving) = &self.approving
            && let Some(at) = self.entries.iter().position(|e| {
                e.approval
                    .as_ref()
                    .is_some_and(|approval| &approval.id == approving)
            })
        {
            from = from.min(at);
        }
        let waiting = self.waiting.as_ref().map(|w| w.request_id.as_str());
        self.view(from, carried_window(&self.requests, waiting))
    }

    /// The conversation with its messages from index `from` of this value on (of `entries`, not
    /// counting those a view already leaves out), and no request: a commit's answer.
    pub fn newest_from(&self, from: usize) -> Conversation {
        self.view(from, self.requests.len())
    }

    /// A page for the owner's reader: the newest `limit` messages (at least one, at most
    /// [`super::MAX_PAGE_MESSAGES`]) before index `before` of the conversation (the end when
    /// `None` or past it), its first message's index in `entries_from`, and the requests its
    /// messages name, with the one waiting.
    pub fn page(&self, before: Option<usize>, limit: usize) -> Conversation {
        let len = self.entries.len();
        let from = self.entries_from as usize;
        let end = before.map_or(len, |b| b.saturating_sub(from).min(len));
        let start = end.saturating_sub(limit.clamp(1, super::MAX_PAGE_MESSAGES));
        let mut page = self.view(len, self.requests.len());
        page.entries = self.entries[start..end].to_vec();
        page.entries_from = self.entries_from + start as u32;
        let waiting = self.waiting.as_ref().map(|w| w.request_id.as_str());
        let named = |id: &str| {
            waiting == Some(id)
                || page
                    .entries
                    .iter()
                    .any(|e| e.request_id.as_deref() == Some(id))
        };
        page.requests = self
            .requests
            .iter()
            .filter(|r| named(&r.request_id))
            .cloned()
            .collect();
        page
    }

    /// The model's history within `budget` characters (at most [`MAX_TURN_HISTORY_CHARS`]):
    /// [`super::model_history`] of the messages, a long conversation's earlier messages summed
    /// up in a digest before the newest.
    pub fn model_history(&self, budget: usize) -> Vec<crate::protocol::ChatMessage> {
        history_after(
            &self.entries,
            self.entries_from as usize,
            budget.min(MAX_TURN_HISTORY_CHARS),
        )
    }

    fn view(&self, from: usize, requests_from: usize) -> Conversation {
        let from = from.min(self.entries.len());
        Conversation {
            id: self.id.clone(),
            owner: self.owner.clone(),
            kind: self.kind,
            title: self.title.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            turns: self.turns,
            leases: self.leases,
            running: self.running,
            token_hash: self.token_hash.clone(),
            guided: self.guided.clone(),
            entries: self.entries[from..].to_vec(),
            entries_from: self.entries_from + from as u32,
            stored_bytes: self.stored_bytes,
            requests: self.requests[requests_from.min(self.requests.len())..].to_vec(),
            waiting: self.waiting.clone(),
            writing_style: self.writing_style.clone(),
            approving: self.approving.clone(),
        }
    }
}

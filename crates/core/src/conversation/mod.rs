//! Server-held conversations (chat-architecture.md §6): one record a conversation, owned,
//! with its turns serialized. A guided conversation keeps the workflow's last state (for
//! refresh recovery); an assistant conversation keeps every message with its tool calls,
//! payloads, suggestions and time. Every change is a [`Command`] given to [`handle`]: a turn
//! begins (refused while another runs, or when it builds on a stale count of turns), commits,
//! or is abandoned; the driver (a Durable Object at the edge) loads, hands over and saves.

mod announce;
mod approvals;
mod cards;
mod command;
mod context;
mod cut_short;
mod events;
mod history;
mod turn;
mod view;

pub use crate::protocol::EntryStatus;
pub use command::{Command, handle};
pub use context::SlotSupply;
pub use events::{ConversationEvent, WaitingMessage};
pub use history::{MAX_DIGEST_CHARS, MAX_HISTORY_CHARS, model_history};
pub use turn::{ConversationError, Handled, Reply};
pub use view::{DIGEST_WINDOW, MAX_TURN_HISTORY_CHARS};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::agent::ToolUse;
use crate::approval::Approval;
use crate::handshake::ContextRequest;
use crate::interrupt::{Interrupt, Interruptible};
use crate::markers::{Payload, SuggestedAction, SuggestedValue};
use crate::protocol::{ChatMessage, Role};
use crate::workflow::Config;

/// Most turns an assistant conversation holds; past them, a new conversation is needed. Each
/// message is a row of its own at the edge, so this bounds storage, not the cost of a turn
/// (the model reads the newest messages and a digest of the ones before: [`model_history`]).
pub const MAX_TURNS: u32 = 10_000;
/// Most bytes of stored messages and requests an assistant conversation may hold and still
/// begin a turn: its object keeps the record in memory, a few copies at once while a command
/// runs, within the object's 128 MB.
pub const MAX_STORED_BYTES: u64 = 8_000_000;
/// Most messages one page of a conversation holds ([`Conversation::page`]).
pub const MAX_PAGE_MESSAGES: usize = 1_000;
/// Largest guided conversation, as stored JSON, that may begin another turn: its record is one
/// stored value (at most 2 MB at the edge), so one more turn always fits.
pub const MAX_GUIDED_BYTES: usize = 1_000_000;
/// Longest tool output kept in a stored conversation, in characters.
pub const MAX_STORED_TOOL_OUTPUT: usize = 4_000;
/// Longest conversation title, in characters.
pub const MAX_TITLE_CHARS: usize = 80;

/// What a conversation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConversationKind {
    /// The guided workflow chat.
    Guided,
    /// The page-aware assistant.
    Assistant,
}

/// The guided workflow's state after the last turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GuidedState {
    /// The workflow id.
    pub workflow: String,
    /// The step the next request uses.
    pub current_step: String,
    /// The collected fields.
    pub current_config: Config,
    /// The conversation so far.
    pub conversation_history: Vec<ChatMessage>,
    /// Skipped optional fields.
    pub skipped: Vec<String>,
}

/// What the owner did with a payload card of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CardOutcome {
    /// Accepted, and applied on the page.
    Accepted,
    /// Set aside.
    Dismissed,
    /// Accepted, but applying it failed (`note` says why); it can be tried again.
    Failed,
}

/// A payload card's outcome, when, and (failed) why. Accepted is final.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CardState {
    /// What happened.
    pub outcome: CardOutcome,
    /// When (ms since the epoch).
    pub at: u64,
    /// Why applying it failed, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Longest note of a failed card, in characters.
pub const MAX_CARD_NOTE_CHARS: usize = 300;

/// One message of an assistant conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ConversationMessage"))]
pub struct Entry {
    /// Its id (messages stored since context requests exist have one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Where it stands (a deferred user message, or an answer cut short).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<EntryStatus>,
    /// The context request of its turn, if one was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Who wrote it.
    pub role: Role,
    /// The text (for the assistant: marker lines removed).
    pub content: String,
    /// When (ms since the epoch).
    pub at: u64,
    /// The page the user was on (user messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// The server action this message asked for, instead of text (user messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Tools called for this answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_history: Vec<ToolUse>,
    /// Payloads of this answer, the main card last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payloads: Vec<Payload>,
    /// Chips offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_values: Vec<SuggestedValue>,
    /// Buttons offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_actions: Vec<SuggestedAction>,
    /// What the owner did with its payload cards, by the payload's index in `payloads`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cards: BTreeMap<u32, CardState>,
    /// The tool call this answer held for the owner's approval, and what became of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

impl Entry {
    /// A user message.
    pub fn user(content: &str, at: u64, page: Option<&str>) -> Entry {
        Entry {
            id: None,
            status: None,
            request_id: None,
            role: Role::User,
            content: content.to_owned(),
            at,
            page: page.map(str::to_owned),
            action: None,
            tool_history: Vec::new(),
            payloads: Vec::new(),
            suggested_values: Vec::new(),
            suggested_actions: Vec::new(),
            cards: BTreeMap::new(),
            approval: None,
        }
    }
}

/// A turn being built: its number, its lease and when it began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningTurn {
    /// The turn's number (the count of turns once it commits).
    pub turn: u32,
    /// Which begin this is (a turn given up and begun again gets a new lease, so the late
    /// commit of the first one is refused).
    pub lease: u32,
    /// When it began (ms since the epoch).
    pub started_at: u64,
    /// When it is given up if it has not committed (ms since the epoch).
    pub expires_at: u64,
    /// The turn resumes the waiting context request, and its begin ended that request as
    /// `resolved`: a turn given up opens it again, so the supply can be sent again and the
    /// fallback still applies.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reopens: bool,
}

/// The turn a request holds back: what the user asked, from where, of which provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waiting {
    /// The request.
    pub request_id: String,
    /// The user's message.
    pub message: String,
    /// The page context it was sent with (as sent).
    pub context: serde_json::Value,
    /// The provider named, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// A conversation as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// Its id.
    pub id: String,
    /// Its owner's id.
    pub owner: String,
    /// Guided or assistant.
    pub kind: ConversationKind,
    /// A title (the assistant's first message, cut).
    #[serde(default)]
    pub title: String,
    /// Creation time.
    pub created_at: u64,
    /// Last commit.
    pub updated_at: u64,
    /// Turns committed.
    pub turns: u32,
    /// Turns begun, committed or not (the last lease given).
    #[serde(default)]
    pub leases: u32,
    /// The turn being built, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<RunningTurn>,
    /// SHA-256 of the guided conversation's access token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_hash: Option<String>,
    /// The guided workflow's last state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guided: Option<GuidedState>,
    /// The assistant's messages, oldest first (in a view, the newest only: from
    /// `entries_from`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<Entry>,
    /// The index of `entries[0]` among all the conversation's messages: 0 for the whole record,
    /// more in a view that holds only the newest ([`Conversation::for_turn`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub entries_from: u32,
    /// Bytes of the messages and requests stored, as JSON (counted as they are added; what a
    /// later change to a stored message adds is not counted).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub stored_bytes: u64,
    /// Context requests made, oldest first, with their supplies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<ContextRequest>,
    /// The deferred turn, while one waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    /// The conversation's writing style (a prompt-sheet style name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writing_style: Option<String>,
    /// The approval whose call the running turn runs: a turn that ends before storing the
    /// call's result leaves the approval saying so, never "running" forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approving: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl Conversation {
    /// When its object must wake next: the waiting request's reminder or fallback, or a pending
    /// approval's deadline, else the end of its retention (`retention_ms` after the last change).
    pub fn next_wake(&self, retention_ms: u64) -> u64 {
        let context = self.next_context_wake(retention_ms);
        approvals::next_deadline(self).map_or(context, |deadline| deadline.min(context))
    }

    fn next_context_wake(&self, retention_ms: u64) -> u64 {
        let retention = self.updated_at.saturating_add(retention_ms);
        let waiting = self.waiting.as_ref().and_then(|w| {
            self.requests
                .iter()
                .find(|r| r.request_id == w.request_id && r.is_open())
        });
        waiting
            .and_then(|request| request.lifecycle().next_wake())
            .map_or(retention, |wake| wake.min(retention))
    }

    /// Everything its turns waited on or wait on, oldest first, in the one shape of an
    /// interrupt: the approvals its answers asked for and its context requests.
    pub fn interrupts(&self) -> Vec<Interrupt> {
        let approvals = self
            .entries
            .iter()
            .filter_map(|e| e.approval.as_ref())
            .filter(|a| !a.id.is_empty())
            .map(Interruptible::interrupt);
        let mut all: Vec<Interrupt> = approvals
            .chain(self.requests.iter().map(Interruptible::interrupt))
            .collect();
        all.sort_by_key(|i| i.opened_at);
        all
    }

    /// Whether the conversation may begin no more turns: an assistant conversation past
    /// [`MAX_STORED_BYTES`], a guided one whose record is past [`MAX_GUIDED_BYTES`].
    pub fn is_full(&self) -> bool {
        match self.kind {
            ConversationKind::Assistant => self.stored_bytes > MAX_STORED_BYTES,
            ConversationKind::Guided => {
                serde_json::to_vec(self).map_or(usize::MAX, |bytes| bytes.len()) > MAX_GUIDED_BYTES
            }
        }
    }

    /// Counts `item`, added to the stored messages or requests, in `stored_bytes`.
    pub(crate) fn count_stored<T: Serialize>(&mut self, item: &T) {
        let bytes = serde_json::to_vec(item).map_or(0, |bytes| bytes.len());
        self.stored_bytes = self.stored_bytes.saturating_add(bytes as u64);
    }

    /// The conversation's entry in its owner's list.
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "turns": self.turns,
        })
    }
}

/// A title from a first message: one line, at most [`MAX_TITLE_CHARS`], cut at a word.
pub fn title_from(message: &str) -> String {
    let line: String = message
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if line.chars().count() <= MAX_TITLE_CHARS {
        return line;
    }
    let mut title = String::new();
    for word in line.split(' ') {
        if title.chars().count() + word.chars().count() + 1 > MAX_TITLE_CHARS - 1 {
            break;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    if title.is_empty() {
        title = line.chars().take(MAX_TITLE_CHARS - 1).collect();
    }
    title + "…"
}

//! What a conversation tells the browsers watching it (context-handshake.md §4.4), sent by its
//! Durable Object over hibernatable WebSockets: messages stored, every event of a turn as it runs
//! (with its sequence number, so a tab that joins late asks for the rest), deltas of an answer
//! being written, and a context request's life (issued, updated, resolved, reminded), payload
//! cards' outcomes and approvals' decisions, each of the last two followed by the same change as
//! an interrupt (`conversation:interrupt`), the one shape every kind of wait has.

use serde::Serialize;

use super::{CardState, Entry};
use crate::approval::Approval;
use crate::handshake::ContextRequest;
use crate::interrupt::Interrupt;
use crate::protocol::StreamEvent;

/// One event, tagged by `type` (`conversation:message`, `conversation:context_request`...).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type")]
pub enum ConversationEvent {
    /// A message was stored (a deferred user message, or an answer).
    #[serde(rename = "conversation:message")]
    Message {
        /// The conversation.
        conversation_id: String,
        /// The message.
        message: Entry,
        /// Its index among the conversation's messages (its cards' outcomes are kept by it).
        index: usize,
    },
    /// A turn started: the user's message, before the answer (not stored until the turn ends).
    #[serde(rename = "conversation:turn_started")]
    TurnStarted {
        /// The conversation.
        conversation_id: String,
        /// The turn's lease: its events' sequence numbers are `lease × 1 000 000 + n`.
        lease: u32,
        /// The user's message (`None` for a resumed turn, whose message is stored).
        message: Option<Entry>,
        /// The id the message waited under in the line (`x-stepwise-waiting`), when it waited:
        /// the tab that sent it knows the turn as its own even after a reload.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        waiting_id: Option<String>,
    },
    /// One event of the running turn, as its SSE clients get it (text as `model_delta`, the
    /// model's own text, for clients that parse markers).
    #[serde(rename = "conversation:turn_event")]
    TurnEvent {
        /// The conversation.
        conversation_id: String,
        /// The event's sequence number (its SSE `id`).
        seq: u64,
        /// The event.
        event: StreamEvent,
    },
    /// Answers a tab's `{"type": "resume", "after": <seq>}` once the events it missed are sent:
    /// whether a turn is still running.
    #[serde(rename = "conversation:caught_up")]
    CaughtUp {
        /// The conversation.
        conversation_id: String,
        /// A turn runs; its next events follow.
        running: bool,
    },
    /// The messages waiting behind the running turn changed (one was sent, stopped, or its turn
    /// began), or a tab joined: all of them now, in the order they will be answered (none: the
    /// line is empty). A message's turn, when it begins, starts as any turn does.
    #[serde(rename = "conversation:waiting")]
    Waiting {
        /// The conversation.
        conversation_id: String,
        /// The waiting messages, first to be answered first.
        messages: Vec<WaitingMessage>,
    },
    /// A waiting message's turn could not begin (a limit reached while it waited, say): it is
    /// out of the line and nothing of it was kept. Its stream says so too; a tab that sent it
    /// and reloaded since (it lists the message as its own) gives it back from this.
    #[serde(rename = "conversation:not_begun")]
    NotBegun {
        /// The conversation.
        conversation_id: String,
        /// The message's id in the line (`x-stepwise-waiting`).
        waiting_id: String,
        /// The message, as the line listed it (for a tab that never saw it listed).
        content: String,
        /// Why, as an error code (`rate_limited`, `context_pending`...).
        code: String,
        /// Why, for people.
        message: String,
    },
    /// A piece of an answer being written (display text).
    #[serde(rename = "conversation:delta")]
    Delta {
        /// The conversation.
        conversation_id: String,
        /// The text.
        text: String,
    },
    /// A turn was deferred: the request it waits on.
    #[serde(rename = "conversation:context_request")]
    ContextRequest {
        /// The conversation.
        conversation_id: String,
        /// The request.
        request: ContextRequest,
    },
    /// A slot was supplied or skipped.
    #[serde(rename = "conversation:context_update")]
    ContextUpdate {
        /// The conversation.
        conversation_id: String,
        /// The request now.
        request: ContextRequest,
    },
    /// The request ended (resolved, forced or fallen back); the answer follows.
    #[serde(rename = "conversation:context_resolved")]
    ContextResolved {
        /// The conversation.
        conversation_id: String,
        /// The request.
        request: ContextRequest,
    },
    /// The owner accepted, dismissed or failed to apply a payload card.
    #[serde(rename = "conversation:card")]
    Card {
        /// The conversation.
        conversation_id: String,
        /// The answer's index among the conversation's messages.
        message: usize,
        /// The payload's index in the answer's `payloads`.
        payload: usize,
        /// The card's state now.
        state: CardState,
    },
    /// An approval was decided, expired, or its approved call returned.
    #[serde(rename = "conversation:approval")]
    Approval {
        /// The conversation.
        conversation_id: String,
        /// The answer's index among the conversation's messages.
        message: usize,
        /// The approval now.
        approval: Box<Approval>,
    },
    /// Something a turn waits on opened, changed or was resolved (an approval, a context
    /// request), in the one shape every interrupt has; sent after the kind's own event.
    #[serde(rename = "conversation:interrupt")]
    Interrupt {
        /// The conversation.
        conversation_id: String,
        /// The interrupt now.
        interrupt: Interrupt,
    },
    /// Half the SLA has passed and the request is still open.
    #[serde(rename = "conversation:context_reminder")]
    ContextReminder {
        /// The conversation.
        conversation_id: String,
        /// The request.
        request_id: String,
        /// When the turn runs without it (ms since the epoch).
        deadline: u64,
    },
}

/// A message waiting behind the running turn, as its conversation's tabs see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WaitingMessage {
    /// The id its sender's stream was named by (`x-stepwise-waiting`): a Stop naming it takes
    /// it out of the line.
    pub id: String,
    /// What it says: the message, or the label of the action it asks for.
    pub content: String,
    /// It asks for an action or an approved call, not a typed message: withdrawn, its button is
    /// pressed again (its label is not something to send).
    pub action: bool,
}

impl ConversationEvent {
    /// The event as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("events serialize")
    }
}

//! What a conversation tells the browsers watching it (context-handshake.md §4.4), sent by its
//! Durable Object over hibernatable WebSockets: messages stored, deltas of an answer being
//! written, and a context request's life (issued, updated, resolved, reminded).

use serde::Serialize;

use super::Entry;
use crate::handshake::ContextRequest;

/// One event, tagged by `type` (`conversation:message`, `conversation:context_request`...).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum ConversationEvent {
    /// A message was stored (a deferred user message, or an answer).
    #[serde(rename = "conversation:message")]
    Message {
        /// The conversation.
        conversation_id: String,
        /// The message.
        message: Entry,
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

impl ConversationEvent {
    /// The event as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("events serialize")
    }
}

//! An answer's display text relayed to the browsers watching its conversation, as
//! `conversation:delta` events through the conversation's object, in pieces of a few hundred
//! characters (one object request each, not one per model chunk).

use stepwise_core::conversation::ConversationEvent;
use worker::{Env, Method, Request, RequestInit};

use crate::conversations::client::BINDING;
use crate::platform::objects;

/// Characters gathered before a piece is sent.
const PIECE_CHARS: usize = 400;

/// Deltas on their way to a conversation's watchers.
pub struct Relay {
    conversation_id: String,
    pending: String,
    enabled: bool,
}

impl Relay {
    /// A relay to `conversation_id`'s watchers; `enabled` is false where nobody can watch.
    pub fn new(conversation_id: &str, enabled: bool) -> Relay {
        Relay {
            conversation_id: conversation_id.to_owned(),
            pending: String::new(),
            enabled,
        }
    }

    /// Adds display text, sending a piece once enough has gathered.
    pub async fn push(&mut self, env: &Env, text: &str) {
        if !self.enabled || text.is_empty() {
            return;
        }
        self.pending.push_str(text);
        if self.pending.chars().count() >= PIECE_CHARS {
            self.flush(env).await;
        }
    }

    /// Sends what has gathered.
    pub async fn flush(&mut self, env: &Env) {
        if !self.enabled || self.pending.is_empty() {
            return;
        }
        let event = ConversationEvent::Delta {
            conversation_id: self.conversation_id.clone(),
            text: std::mem::take(&mut self.pending),
        };
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_body(Some(event.to_json().into()));
        let sent =
            match Request::new_with_init(&format!("https://{BINDING}.internal/broadcast"), &init) {
                Ok(request) => objects::fetch(env, BINDING, &self.conversation_id, request)
                    .await
                    .map(|_| ()),
                Err(error) => Err(error.into()),
            };
        if let Err(error) = sent {
            worker::console_warn!(
                "conversation {}: delta not relayed: {error}",
                self.conversation_id
            );
        }
    }
}

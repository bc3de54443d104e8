//! An assistant turn's hold on its conversation: begun on the conversation's Durable Object
//! (a new conversation gets a fresh id), then committed with its messages (and the owner's list
//! entry rewritten) or given up.

use stepwise_core::conversation::{Command, Conversation, Entry, Reply, model_history};
use stepwise_core::protocol::ChatMessage;
use worker::Env;

use crate::conversations::{client, index, object};
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;

/// A turn begun on a conversation.
pub struct Session {
    /// The conversation's id.
    pub id: String,
    /// The owner's id.
    pub owner: String,
    /// The turn's lease on the object.
    pub lease: u32,
    /// The conversation before this turn.
    pub before: Conversation,
}

impl Session {
    /// Begins a turn on conversation `id` of `owner` (a new conversation when `None`), titled
    /// from `message` when new. 404 for another owner's or a missing conversation, 409 while
    /// another turn runs or when the conversation is full.
    pub async fn begin(
        env: &Env,
        owner: &Owner,
        id: Option<&str>,
        message: &str,
        lease_ms: u64,
    ) -> AppResult<Session> {
        let (id, start) = match id {
            Some(id) => (id.to_owned(), false),
            None => (ids::random_id()?, true),
        };
        let command = Command::BeginAssistant {
            message: message.to_owned(),
            start,
            lease_ms,
        };
        match client::send(env, &id, &owner.id, &command).await? {
            Reply::Begun {
                lease,
                conversation,
                ..
            } => Ok(Session {
                id,
                owner: owner.id.clone(),
                lease,
                before: *conversation,
            }),
            _ => Err(AppError::internal(
                &"the conversation answered another kind of reply",
            )),
        }
    }

    /// The conversation so far as the model reads it (within `budget` characters).
    pub fn history(&self, budget: usize) -> Vec<ChatMessage> {
        model_history(&self.before.entries, budget)
    }

    /// Commits the turn's messages, then rewrites the owner's list entry.
    pub async fn commit(&self, env: &Env, entries: Vec<Entry>) -> AppResult<()> {
        let command = Command::CommitAssistant {
            lease: self.lease,
            entries,
        };
        if let Reply::Conversation(record) =
            client::send(env, &self.id, &self.owner, &command).await?
        {
            let ttl_seconds = object::retention_ms(env) / 1000;
            if let Err(error) = index::write(&Kv::new(env)?, &record, ttl_seconds).await {
                worker::console_warn!("conversation {}: list entry not written: {error}", self.id);
            }
        }
        Ok(())
    }

    /// Gives the turn up: nothing of it is kept (a first turn takes its conversation along).
    pub async fn abort(&self, env: &Env) {
        let command = Command::Abort { lease: self.lease };
        if let Err(error) = client::send(env, &self.id, &self.owner, &command).await {
            worker::console_warn!("conversation {}: abort: {error}", self.id);
        }
    }
}

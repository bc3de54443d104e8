//! A guided conversation's identity and its turns on the conversation's Durable Object: a
//! 128-bit id and an access token made by the edge on its first turn (the token stored only as a
//! SHA-256), a turn begun on the object (which checks the owner, the token, that no other turn
//! runs and that the request builds on the latest count of turns; a first turn creates the
//! conversation, so a client can join it or stop it at once), then committed with the
//! workflow's new state or given up (a first turn given up takes its conversation along).
use stepwise_core::conversation::{Command, Conversation as Record, GuidedState, Reply};
use stepwise_core::owner::OwnerKind;
use worker::Env;

use crate::conversations::client;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::owner::{Owner, hash_identity};

/// Header carrying a conversation's access token.
pub const TOKEN_HEADER: &str = "x-conversation-token";

/// A conversation a turn has begun on.
pub struct Conversation {
    /// Its id.
    pub id: String,
    /// Its access token: in clear only on the turn that made it (to send back once).
    pub token: Option<String>,
    /// The turn's number (the count of turns once it commits).
    pub turn: u32,
    /// The turn's lease on the object.
    pub lease: u32,
    /// The turn starts the conversation.
    new: bool,
    /// The owner's id.
    owner: String,
    /// The workflow's state stored with a continuing conversation: what its turn builds on
    /// (`None` for a new one).
    pub stored: Option<GuidedState>,
}

impl Conversation {
    /// Begins a turn on conversation `id` for the holder of `token`: its first (`turns` is
    /// `None`: the id and token were just made by the edge, and the conversation is created) or
    /// one building on `turns` committed turns. Errors: 404 `conversation_not_found` (also for
    /// another owner's), 403 `forbidden` (token), 409 `turn_in_progress` or `stale_turn`.
    pub async fn begin(
        env: &Env,
        owner: &Owner,
        id: &str,
        token: &str,
        turns: Option<u32>,
        lease_ms: u64,
    ) -> AppResult<Conversation> {
        let token = require_token(Some(token.to_owned()))?;
        let command = Command::BeginGuided {
            token_hash: hash_token(&token).await?,
            turns,
            lease_ms,
        };
        match client::send(env, id, &owner.id, &command).await? {
            Reply::Begun {
                turn,
                lease,
                conversation,
            } => Ok(Conversation {
                id: id.to_owned(),
                token: turns.is_none().then_some(token),
                turn,
                lease,
                new: turns.is_none(),
                owner: owner.id.clone(),
                stored: conversation.guided,
            }),
            other => Err(unexpected(&other)),
        }
    }

    /// Whether the turn starts the conversation (it keeps nothing unless it commits).
    pub fn is_new(&self) -> bool {
        self.new
    }

    /// Commits the turn with the workflow's new state.
    pub async fn commit(&self, env: &Env, state: GuidedState) -> AppResult<()> {
        let command = Command::CommitGuided {
            lease: self.lease,
            state,
        };
        client::send(env, &self.id, &self.owner, &command).await?;
        Ok(())
    }

    /// Gives the turn up (nothing of it is kept; a first turn takes its conversation along).
    pub async fn abort(&self, env: &Env) {
        let command = Command::Abort { lease: self.lease };
        if let Err(error) = client::send(env, &self.id, &self.owner, &command).await {
            worker::console_warn!("conversation {}: abort: {error}", self.id);
        }
    }
}

/// The stored conversation `id` of `owner`, for the holder of its token.
pub async fn read(env: &Env, owner: &Owner, id: &str, token: Option<String>) -> AppResult<Record> {
    let token_hash = hash_token(&require_token(token)?).await?;
    let command = Command::Read {
        token_hash: Some(token_hash),
    };
    match client::send(env, id, &owner.id, &command).await? {
        Reply::Conversation(record) => Ok(*record),
        other => Err(unexpected(&other)),
    }
}

/// Replaces the collected fields of conversation `id` between turns (an inline edit).
pub async fn set_config(
    env: &Env,
    owner: &Owner,
    id: &str,
    token: Option<String>,
    config: stepwise_core::workflow::Config,
) -> AppResult<Record> {
    let token_hash = hash_token(&require_token(token)?).await?;
    let command = Command::SetGuidedConfig { token_hash, config };
    match client::send(env, id, &owner.id, &command).await? {
        Reply::Conversation(record) => Ok(*record),
        other => Err(unexpected(&other)),
    }
}

/// `token` when it is well formed; 403 `forbidden` otherwise.
pub fn require_token(token: Option<String>) -> AppResult<String> {
    token
        .filter(|t| ids::is_id(t))
        .ok_or_else(|| AppError::forbidden(MISSING_TOKEN))
}

fn unexpected(_: &Reply) -> AppError {
    AppError::internal(&"the conversation answered another kind of reply")
}

const MISSING_TOKEN: &str = "this conversation needs its token in the X-Conversation-Token header";

/// The stored form of a conversation token.
pub async fn hash_token(token: &str) -> AppResult<String> {
    hash_identity(OwnerKind::Anonymous, &format!("conversation:{token}")).await
}

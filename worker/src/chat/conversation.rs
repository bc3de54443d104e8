//! A guided conversation's identity and its turns on the conversation's Durable Object: a
//! 128-bit id and an access token made by the edge on its first turn (the token stored only as a
//! SHA-256), a turn begun on the object (which checks the owner, the token, that no other turn
//! runs and that the request builds on the latest count of turns), then committed with the
//! workflow's new state or given up. A first turn takes nothing on the object before it answers:
//! nobody else can know a new id yet, so its conversation is created whole when it commits, and
//! the model call does not wait on a storage write (the object that runs it knows who may join
//! it meanwhile, `hosted.rs`).
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
    /// The turn's lease on the object (`None`: a first turn, which holds none).
    pub lease: Option<u32>,
    /// The token's hash, to store with a new conversation.
    pub token_hash: String,
    /// The owner's id.
    owner: String,
    /// The workflow's state stored with a continuing conversation: what its turn builds on
    /// (`None` for a new one).
    pub stored: Option<GuidedState>,
}

impl Conversation {
    /// Begins a turn on conversation `id` for the holder of `token`: its first (`turns` is
    /// `None`: the id and token were just made by the edge; nothing is stored until it commits)
    /// or one building on `turns` committed turns. Errors: 404 `conversation_not_found` (also
    /// for another owner's), 403 `forbidden` (token), 409 `turn_in_progress` or `stale_turn`.
    pub async fn begin(
        env: &Env,
        owner: &Owner,
        id: &str,
        token: &str,
        turns: Option<u32>,
        lease_ms: u64,
    ) -> AppResult<Conversation> {
        let token = require_token(Some(token.to_owned()))?;
        let token_hash = hash_token(&token).await?;
        let Some(turns) = turns else {
            return Ok(Conversation {
                id: id.to_owned(),
                token: Some(token),
                turn: 1,
                lease: None,
                token_hash,
                owner: owner.id.clone(),
                stored: None,
            });
        };
        let command = Command::BeginGuided {
            token_hash: token_hash.clone(),
            turns: Some(turns),
            lease_ms,
        };
        match client::send(env, id, &owner.id, &command).await? {
            Reply::Begun {
                turn,
                lease,
                conversation,
            } => Ok(Conversation {
                id: id.to_owned(),
                token: None,
                turn,
                lease: Some(lease),
                token_hash,
                owner: owner.id.clone(),
                stored: conversation.guided,
            }),
            other => Err(unexpected(&other)),
        }
    }

    /// Whether the turn starts the conversation (nothing of it is stored yet).
    pub fn is_new(&self) -> bool {
        self.lease.is_none()
    }

    /// Commits the turn with the workflow's new state (a first turn creates its conversation).
    pub async fn commit(&self, env: &Env, state: GuidedState) -> AppResult<()> {
        let command = match self.lease {
            Some(lease) => Command::CommitGuided { lease, state },
            None => Command::CreateGuided {
                token_hash: self.token_hash.clone(),
                state,
            },
        };
        client::send(env, &self.id, &self.owner, &command).await?;
        Ok(())
    }

    /// Gives the turn up (nothing of it is kept; a first turn stored nothing yet).
    pub async fn abort(&self, env: &Env) {
        let Some(lease) = self.lease else {
            return;
        };
        let command = Command::Abort { lease };
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

//! A guided conversation's identity and last snapshot: a 128-bit id and an access token made
//! on its first turn, and the snapshot stored in KV after every turn for refresh recovery. A
//! conversation belongs to the owner who started it; its token is stored only as a SHA-256,
//! and both are checked here and nowhere else.

use serde::{Deserialize, Serialize};
use stepwise_core::protocol::ChatMessage;
use stepwise_core::workflow::Config;

use stepwise_core::owner::OwnerKind;

use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::owner::{Owner, hash_identity};

/// Header carrying a conversation's access token.
pub const TOKEN_HEADER: &str = "x-conversation-token";
/// How long a conversation snapshot is kept after its last turn.
const SNAPSHOT_TTL_SECONDS: u64 = 30 * 24 * 3600;

/// The last persisted state of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The owner id of the owner who started it.
    pub owner: String,
    /// SHA-256 of the access token; only its holder may read or extend the conversation.
    pub token_hash: String,
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
    /// Turns persisted so far.
    pub turns: u32,
}

/// The conversation a request belongs to.
pub struct Conversation {
    /// Its id.
    pub id: String,
    /// Its access token: in clear only on the turn that made it (to send back once).
    pub token: Option<String>,
    /// SHA-256 of the access token.
    pub token_hash: String,
    /// The stored snapshot; `None` for a conversation this request starts.
    pub snapshot: Option<Snapshot>,
}

impl Conversation {
    /// A new conversation with a fresh id and token.
    pub async fn start() -> AppResult<Conversation> {
        let token = ids::random_id()?;
        Ok(Conversation {
            id: ids::random_id()?,
            token_hash: hash_token(&token).await?,
            token: Some(token),
            snapshot: None,
        })
    }

    /// A stored conversation of `owner`, for the holder of its token: 404
    /// `conversation_not_found` when KV holds no such conversation of this owner (another
    /// owner's conversation is not found either), 403 `forbidden` without the token or with
    /// another one. `id` must be a valid id.
    pub async fn resume(
        kv: &Kv,
        owner: &Owner,
        id: &str,
        token: Option<String>,
    ) -> AppResult<Conversation> {
        let snapshot = Self::snapshot(kv, owner, id, token).await?;
        Ok(Conversation {
            id: id.to_owned(),
            token: None,
            token_hash: snapshot.token_hash.clone(),
            snapshot: Some(snapshot),
        })
    }

    /// The stored snapshot of conversation `id` (errors as [`Conversation::resume`]).
    pub async fn snapshot(
        kv: &Kv,
        owner: &Owner,
        id: &str,
        token: Option<String>,
    ) -> AppResult<Snapshot> {
        let snapshot: Snapshot = kv
            .json(&key(id))
            .await?
            .filter(|s: &Snapshot| s.owner == owner.id)
            .ok_or_else(AppError::conversation_not_found)?;
        let token = token
            .filter(|t| ids::is_id(t))
            .ok_or_else(|| AppError::forbidden(MISSING_TOKEN))?;
        if !ids::same_secret(&snapshot.token_hash, &hash_token(&token).await?) {
            return Err(AppError::forbidden("the conversation token does not match"));
        }
        Ok(snapshot)
    }

    /// Turns persisted before this request.
    pub fn turns(&self) -> u32 {
        self.snapshot.as_ref().map_or(0, |s| s.turns)
    }

    /// Stores the conversation's snapshot after a turn.
    pub async fn save(&self, kv: &Kv, snapshot: &Snapshot) -> AppResult<()> {
        kv.put_json(&key(&self.id), snapshot, Some(SNAPSHOT_TTL_SECONDS))
            .await
    }
}

const MISSING_TOKEN: &str = "this conversation needs its token in the X-Conversation-Token header";

/// The stored form of a conversation token.
async fn hash_token(token: &str) -> AppResult<String> {
    hash_identity(OwnerKind::Anonymous, &format!("conversation:{token}")).await
}

fn key(id: &str) -> String {
    format!("conversation:{id}")
}

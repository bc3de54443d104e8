//! A guided conversation's identity and last snapshot: a 128-bit id and an access token made
//! on its first turn, and the snapshot stored in KV after every turn for refresh recovery. The
//! token is checked here and nowhere else.

use serde::{Deserialize, Serialize};
use stepwise_core::protocol::ChatMessage;
use stepwise_core::workflow::Config;

use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;

/// Header carrying a conversation's access token.
pub const TOKEN_HEADER: &str = "x-conversation-token";
/// How long a conversation snapshot is kept after its last turn.
const SNAPSHOT_TTL_SECONDS: u64 = 30 * 24 * 3600;

/// The last persisted state of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Access token; only its holder may read or extend the conversation.
    pub token: String,
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
    /// Its access token.
    pub token: String,
    /// The stored snapshot; `None` for a conversation this request starts.
    pub snapshot: Option<Snapshot>,
}

impl Conversation {
    /// A new conversation with a fresh id and token.
    pub fn start() -> AppResult<Conversation> {
        Ok(Conversation {
            id: ids::random_id()?,
            token: ids::random_id()?,
            snapshot: None,
        })
    }

    /// A stored conversation, for the holder of its token: 403 `forbidden` without the token or
    /// with another one, 404 `conversation_not_found` when KV holds no such conversation (an
    /// unknown id cannot be claimed with a token of one's own). `id` must be a valid id.
    pub async fn resume(kv: &Kv, id: &str, token: Option<String>) -> AppResult<Conversation> {
        let snapshot = Self::snapshot(kv, id, token).await?;
        Ok(Conversation {
            id: id.to_owned(),
            token: snapshot.token.clone(),
            snapshot: Some(snapshot),
        })
    }

    /// The stored snapshot of conversation `id`, for the holder of its token (errors as
    /// [`Conversation::resume`]).
    pub async fn snapshot(kv: &Kv, id: &str, token: Option<String>) -> AppResult<Snapshot> {
        let token = token
            .filter(|t| ids::is_id(t))
            .ok_or_else(|| AppError::forbidden(MISSING_TOKEN))?;
        let snapshot: Snapshot = kv
            .json(&key(id))
            .await?
            .ok_or_else(AppError::conversation_not_found)?;
        if !ids::same_secret(&snapshot.token, &token) {
            return Err(AppError::forbidden("the conversation token does not match"));
        }
        Ok(snapshot)
    }

    /// Whether this request started the conversation (its token is then sent back once).
    pub fn is_new(&self) -> bool {
        self.snapshot.is_none()
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

fn key(id: &str) -> String {
    format!("conversation:{id}")
}

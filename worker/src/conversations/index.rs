//! Each owner's list of assistant conversations behind `GET /api/assistant/conversations`: one
//! KV key per conversation, `assistant:<owner id>:<inverted creation time>:<id>`, so a prefix
//! listing is the owner's conversations newest first, with the entry (title, times, turns) in
//! the key's metadata. Written at every commit, expiring with the conversation.

use stepwise_core::conversation::Conversation;

use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, Listing};

const PREFIX: &str = "assistant:";

/// Writes the conversation's entry, expiring after `ttl_seconds`.
pub async fn write(kv: &Kv, conversation: &Conversation, ttl_seconds: u64) -> AppResult<()> {
    kv.put_metadata(&key(conversation), conversation.summary(), ttl_seconds)
        .await
}

/// Removes the conversation's entry.
pub async fn delete(kv: &Kv, conversation: &Conversation) -> AppResult<()> {
    kv.delete(&key(conversation)).await
}

/// A page of the owner's newest entries.
pub async fn list(
    kv: &Kv,
    owner: &str,
    limit: u64,
    cursor: Option<String>,
) -> AppResult<Listing<serde_json::Value>> {
    kv.list(&format!("{PREFIX}{owner}:"), limit, cursor).await
}

fn key(conversation: &Conversation) -> String {
    const LATEST: u64 = 9_999_999_999_999;
    format!(
        "{PREFIX}{}:{:013}:{}",
        conversation.owner,
        LATEST.saturating_sub(conversation.created_at),
        conversation.id
    )
}

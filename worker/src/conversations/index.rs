//! Each owner's list of assistant conversations behind `GET /api/assistant/conversations`: one
//! KV key per conversation, `assistant:<owner id>:<inverted creation time>:<id>`, so a prefix
//! listing is the owner's conversations newest first, with the entry (title, times, turns) in
//! the key's metadata. Written at every commit, expiring with the conversation.

use stepwise_core::conversation::Conversation;

use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, ListedItem, OwnerList};

/// Each owner's conversations, newest first.
pub const LIST: OwnerList = OwnerList::new("assistant:");

/// Writes the conversation's entry, expiring after `ttl_seconds`.
pub async fn write(kv: &Kv, conversation: &Conversation, ttl_seconds: u64) -> AppResult<()> {
    LIST.put(kv, item(conversation), conversation.summary(), ttl_seconds)
        .await
}

/// Removes the conversation's entry.
pub async fn delete(kv: &Kv, conversation: &Conversation) -> AppResult<()> {
    LIST.remove(kv, item(conversation)).await
}

fn item(conversation: &Conversation) -> ListedItem<'_> {
    ListedItem {
        owner: &conversation.owner,
        created_at: conversation.created_at,
        id: &conversation.id,
    }
}

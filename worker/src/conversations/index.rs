//! Each owner's lists of conversations in KV: one key per conversation,
//! `<list><owner id>:<inverted creation time>:<id>`, so a prefix listing is the owner's
//! conversations newest first, with the entry (title, times, turns) in the key's metadata.
//! Assistant conversations (`assistant:`, behind `GET /api/assistant/conversations`) are listed
//! at every commit; guided ones (`guided:`, read only by the owner's export and erase) when
//! created and on the first change of each day. Entries expire with their conversations.

use stepwise_core::conversation::{Conversation, ConversationKind};

use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, ListedItem, OwnerList, RELIST_MARGIN_SECONDS};

/// Each owner's assistant conversations, newest first.
pub const LIST: OwnerList = OwnerList::new("assistant:");
/// Each owner's guided conversations, newest first.
pub const GUIDED: OwnerList = OwnerList::new("guided:");

/// Writes the conversation's entry in its kind's list, expiring after `ttl_seconds` (a guided
/// one's a day later: it is listed again only once a day).
pub async fn write(kv: &Kv, conversation: &Conversation, ttl_seconds: u64) -> AppResult<()> {
    let ttl_seconds = match conversation.kind {
        ConversationKind::Assistant => ttl_seconds,
        ConversationKind::Guided => ttl_seconds.saturating_add(RELIST_MARGIN_SECONDS),
    };
    list_of(conversation)
        .put(kv, item(conversation), conversation.summary(), ttl_seconds)
        .await
}

/// Removes the conversation's entry.
pub async fn delete(kv: &Kv, conversation: &Conversation) -> AppResult<()> {
    list_of(conversation).remove(kv, item(conversation)).await
}

fn list_of(conversation: &Conversation) -> &'static OwnerList {
    match conversation.kind {
        ConversationKind::Assistant => &LIST,
        ConversationKind::Guided => &GUIDED,
    }
}

fn item(conversation: &Conversation) -> ListedItem<'_> {
    ListedItem {
        owner: &conversation.owner,
        created_at: conversation.created_at,
        id: &conversation.id,
    }
}

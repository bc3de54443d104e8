//! Each owner's list of help sessions in KV (`help:<owner id>:<inverted creation time>:<id>`,
//! newest first, the entry in the key's metadata), read only by the owner's export and erase:
//! written by the session's object when the session is created and on its first change of each
//! day, removed when the session is deleted or erased past its retention.

use serde_json::json;
use stepwise_core::help::HelpSession;

use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, ListedItem, OwnerList, RELIST_MARGIN_SECONDS, relist_due};

/// Each owner's help sessions, newest first.
pub const LIST: OwnerList = OwnerList::new("help:");

/// Lists `after` (the session as just saved; `before` as it was) when that is due, its entry
/// expiring a day after the session's `retention_seconds`.
pub async fn relist(
    kv: &Kv,
    before: Option<&HelpSession>,
    after: &HelpSession,
    retention_seconds: u64,
) -> AppResult<()> {
    if !relist_due(before.map(|b| b.updated_at), after.updated_at) {
        return Ok(());
    }
    let entry = json!({"id": after.id, "created_at": after.created_at,
        "updated_at": after.updated_at, "status": after.status, "turns": after.turns});
    let ttl = retention_seconds.saturating_add(RELIST_MARGIN_SECONDS);
    LIST.put(kv, item(after), entry, ttl).await
}

/// Removes the session's entry.
pub async fn unlist(kv: &Kv, session: &HelpSession) -> AppResult<()> {
    LIST.remove(kv, item(session)).await
}

fn item(session: &HelpSession) -> ListedItem<'_> {
    ListedItem {
        owner: &session.owner,
        created_at: session.created_at,
        id: &session.id,
    }
}

//! Each owner's index behind `GET /api/research`: one key per job,
//! `research:<owner id>:<inverted creation time>:<id>`, so a prefix listing is the owner's jobs
//! newest first, with the list entry in the key's metadata so a listing needs no reads. Entries
//! are written at creation (again when the generated title arrives) and at final states, and
//! expire with the job's retention. KV is eventually consistent: a new job may take a moment to
//! show.

use serde::Serialize;
use stepwise_core::research::{Lifetimes, Research, ResearchStatus};

use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, ListedItem, OwnerList};

/// Each owner's jobs, newest first.
pub const LIST: OwnerList = OwnerList::new("research:");

/// A job's entry in the list.
#[derive(Debug, Serialize)]
pub struct IndexEntry<'a> {
    /// Job id.
    pub id: &'a str,
    /// Title.
    pub title: &'a str,
    /// Status when the entry was written.
    pub status: ResearchStatus,
    /// Creation time.
    pub created_at: u64,
    /// How many providers were selected (names are left out: KV metadata holds 1024 bytes).
    pub providers: usize,
    /// The stream it researches for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<&'a str>,
}

/// Writes the job's entry, expiring when the job itself would (a running job: a retention from
/// now, rewritten at its final state).
pub async fn write(kv: &Kv, research: &Research, lifetimes: &Lifetimes) -> AppResult<()> {
    let entry = IndexEntry {
        id: &research.id,
        title: &research.title,
        status: research.status,
        created_at: research.created_at,
        providers: research.selected_llms.len(),
        stream_id: research.stream_id.as_deref(),
    };
    let now = now_ms();
    let until = research
        .expires_at(lifetimes)
        .unwrap_or_else(|| now.saturating_add(lifetimes.retention_ms));
    let ttl_seconds = until.saturating_sub(now) / 1000;
    LIST.put(kv, item(research), entry, ttl_seconds).await
}

/// Removes the job's entry.
pub async fn delete(kv: &Kv, research: &Research) -> AppResult<()> {
    LIST.remove(kv, item(research)).await
}

fn item(research: &Research) -> ListedItem<'_> {
    ListedItem {
        owner: &research.owner,
        created_at: research.created_at,
        id: &research.id,
    }
}

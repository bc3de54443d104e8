//! The KV index behind `GET /api/research`: one key per job, `research:<inverted creation
//! time>:<id>` so a prefix listing is newest first, with the list entry in the key's metadata
//! so a listing needs no reads. KV is eventually consistent: a new job may take a moment to show.

use serde::Serialize;
use stepwise_core::research::{Research, ResearchStatus};

use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, Listing};

/// KV key prefix of the job index.
const PREFIX: &str = "research:";

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
}

/// Writes the job's entry.
pub async fn write(kv: &Kv, research: &Research) -> AppResult<()> {
    let entry = IndexEntry {
        id: &research.id,
        title: &research.title,
        status: research.status,
        created_at: research.created_at,
        providers: research.selected_llms.len(),
    };
    kv.put_metadata(&key(research), entry).await
}

/// A page of the newest entries ([`IndexEntry`] as stored).
pub async fn list(
    kv: &Kv,
    limit: u64,
    cursor: Option<String>,
) -> AppResult<Listing<serde_json::Value>> {
    kv.list(PREFIX, limit, cursor).await
}

fn key(research: &Research) -> String {
    const LATEST: u64 = 9_999_999_999_999;
    format!(
        "{PREFIX}{:013}:{}",
        LATEST.saturating_sub(research.created_at),
        research.id
    )
}

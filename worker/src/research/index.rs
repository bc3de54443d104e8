//! The KV index behind `GET /api/research`: one key per job, `research:<inverted creation
//! time>:<id>` so a prefix listing is newest first, with the list entry in the key's metadata
//! so a listing needs no reads. KV is eventually consistent: a new job may take a moment to show.

use serde::{Deserialize, Serialize};
use stepwise_core::research::{Research, ResearchStatus};

use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, Listing};

/// KV key prefix of the job index.
const PREFIX: &str = "research:";

/// A job's entry in the list.
#[derive(Debug, Serialize, Deserialize)]
pub struct IndexEntry {
    /// Job id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Status when the entry was written.
    pub status: ResearchStatus,
    /// Creation time.
    pub created_at: u64,
    /// How many providers were selected (names are left out: KV metadata holds 1024 bytes).
    pub providers: usize,
}

/// Writes the job's entry.
pub async fn write(kv: &Kv, research: &Research) -> AppResult<()> {
    let title: String = research.title.chars().take(200).collect();
    let entry = IndexEntry {
        id: research.id.clone(),
        title,
        status: research.status,
        created_at: research.created_at,
        providers: research.selected_llms.len(),
    };
    kv.put_metadata(&key(research), entry).await
}

/// A page of the newest entries.
pub async fn list(kv: &Kv, limit: u64, cursor: Option<String>) -> AppResult<Listing<IndexEntry>> {
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

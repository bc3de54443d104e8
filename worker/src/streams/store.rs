//! Saved streams in KV: the record at `stream:<owner id>:<id>` (so another owner's key is never
//! even formed from a request), and each owner's list as `streams:<owner id>:<inverted creation
//! time>:<id>` keys whose metadata is the list entry, newest first with no reads. KV is
//! eventually consistent across locations: a change may take a moment to show elsewhere.

use stepwise_core::streams::SavedStream;
use stepwise_core::workflow::FieldValue;

use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, Listing};

const RECORD: &str = "stream:";
const INDEX: &str = "streams:";

/// The owner's stream `id`, if it exists.
pub async fn load(kv: &Kv, owner: &str, id: &str) -> AppResult<Option<SavedStream>> {
    kv.json(&format!("{RECORD}{owner}:{id}")).await
}

/// Stores the stream and its list entry.
pub async fn save(kv: &Kv, stream: &SavedStream) -> AppResult<()> {
    let key = format!("{RECORD}{}:{}", stream.owner, stream.id);
    kv.put_json(&key, stream, None).await?;
    let stream_type = match stream.config.get("stream_type") {
        Some(FieldValue::Text(kind)) => kind.as_str(),
        _ => "",
    };
    let entry = serde_json::json!({
        "id": stream.id,
        "name": stream.name,
        "stream_type": stream_type,
        "created_at": stream.created_at,
        "updated_at": stream.updated_at,
    });
    kv.put_metadata(&index_key(stream), entry, INDEX_TTL_SECONDS)
        .await
}

/// Removes the stream and its list entry.
pub async fn delete(kv: &Kv, stream: &SavedStream) -> AppResult<()> {
    kv.delete(&index_key(stream)).await?;
    kv.delete(&format!("{RECORD}{}:{}", stream.owner, stream.id))
        .await
}

/// A page of the owner's list, newest first.
pub async fn list(
    kv: &Kv,
    owner: &str,
    limit: u64,
    cursor: Option<String>,
) -> AppResult<Listing<serde_json::Value>> {
    kv.list(&format!("{INDEX}{owner}:"), limit, cursor).await
}

/// List entries live as long as their streams (which do not expire): ten years.
const INDEX_TTL_SECONDS: u64 = 10 * 365 * 24 * 3600;

fn index_key(stream: &SavedStream) -> String {
    const LATEST: u64 = 9_999_999_999_999;
    format!(
        "{INDEX}{}:{:013}:{}",
        stream.owner,
        LATEST.saturating_sub(stream.created_at),
        stream.id
    )
}

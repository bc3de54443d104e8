//! Saved streams in KV: the record at `stream:<owner id>:<id>` (so another owner's key is never
//! even formed from a request), and each owner's list as `streams:<owner id>:<inverted creation
//! time>:<id>` keys whose metadata is the list entry, newest first with no reads. KV is
//! eventually consistent across locations: a change may take a moment to show elsewhere.
//!
//! A stream is kept for `STREAM_RETENTION_DAYS` (365 by default) after its last change: the
//! record, its list entry and its literature expire together (each change writes all three
//! with the stream's new lifetime; literature kept between changes expires with the stream).

use stepwise_core::streams::SavedStream;
use stepwise_core::workflow::FieldValue;

use worker::Env;

use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, ListedItem, OwnerList};
use crate::platform::settings::number;

const RECORD: &str = "stream:";
/// Each owner's streams, newest first.
pub const LIST: OwnerList = OwnerList::new("streams:");

/// The owner's stream `id`, if it exists.
pub async fn load(kv: &Kv, owner: &str, id: &str) -> AppResult<Option<SavedStream>> {
    kv.json(&format!("{RECORD}{owner}:{id}")).await
}

/// Days a stream is kept after its last change without `STREAM_RETENTION_DAYS`.
const DEFAULT_RETENTION_DAYS: u64 = 365;

/// How long a stream is kept after its last change, in seconds (`STREAM_RETENTION_DAYS`).
pub fn retention_seconds(env: &Env) -> u64 {
    number::<u64>(env, "STREAM_RETENTION_DAYS")
        .unwrap_or(DEFAULT_RETENTION_DAYS)
        .saturating_mul(86_400)
}

/// Seconds the stream has left: its retention from its last change (`updated_at`), from now.
/// A stream older than that is one saved before streams expired (its record has no expiry):
/// it is given a whole retention from now.
pub fn seconds_left(stream: &SavedStream, retention_seconds: u64) -> u64 {
    let ends_ms = stream
        .updated_at
        .saturating_add(retention_seconds.saturating_mul(1000));
    match ends_ms.saturating_sub(now_ms()) / 1000 {
        0 => retention_seconds,
        left => left,
    }
}

/// Stores the stream and its list entry, and renews its literature's lifetime, all expiring
/// `retention_seconds` after the stream's last change.
pub async fn save(kv: &Kv, stream: &SavedStream, retention_seconds: u64) -> AppResult<()> {
    let ttl = Some(seconds_left(stream, retention_seconds));
    let key = format!("{RECORD}{}:{}", stream.owner, stream.id);
    kv.put_json(&key, stream, ttl).await?;
    let literature_key = literature_key(&stream.owner, &stream.id);
    if let Some(literature) = kv.text(&literature_key).await? {
        kv.put_text(&literature_key, &literature, ttl).await?;
    }
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
    let entry_ttl = seconds_left(stream, retention_seconds);
    LIST.put(kv, item(stream), entry, entry_ttl).await
}

/// The KV key of a stream's literature (the Articles tab's searches and abstracts kept for
/// the context handshake: `handshake/literature.rs`).
pub fn literature_key(owner: &str, stream: &str) -> String {
    format!("literature:{owner}:{stream}")
}

/// Removes the stream, its list entry and its literature (nothing of it outlives it).
pub async fn delete(kv: &Kv, stream: &SavedStream) -> AppResult<()> {
    LIST.remove(kv, item(stream)).await?;
    kv.delete(&literature_key(&stream.owner, &stream.id))
        .await?;
    kv.delete(&format!("{RECORD}{}:{}", stream.owner, stream.id))
        .await
}

fn item(stream: &SavedStream) -> ListedItem<'_> {
    ListedItem {
        owner: &stream.owner,
        created_at: stream.created_at,
        id: &stream.id,
    }
}

//! Saved streams in KV: the record at `stream:<owner id>:<id>` (so another owner's key is never
//! even formed from a request), and each owner's list as `streams:<owner id>:<inverted creation
//! time>:<id>` keys whose metadata is the list entry, newest first with no reads. KV is
//! eventually consistent across locations: a change may take a moment to show elsewhere.

use stepwise_core::streams::SavedStream;
use stepwise_core::workflow::FieldValue;

use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, ListedItem, OwnerList};

const RECORD: &str = "stream:";
/// Each owner's streams, newest first.
pub const LIST: OwnerList = OwnerList::new("streams:");

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
    LIST.put(kv, item(stream), entry, INDEX_TTL_SECONDS).await
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

/// List entries live as long as their streams (which do not expire): ten years.
const INDEX_TTL_SECONDS: u64 = 10 * 365 * 24 * 3600;

fn item(stream: &SavedStream) -> ListedItem<'_> {
    ListedItem {
        owner: &stream.owner,
        created_at: stream.created_at,
        id: &stream.id,
    }
}

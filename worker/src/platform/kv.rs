//! Workers KV, the one way features reach it: text and JSON values with optional expiry, and
//! keys listed by prefix with their metadata. Each feature owns its key names.

use serde::Serialize;
use serde::de::DeserializeOwned;
use worker::kv::KvStore;
use worker::{Env, Request, Response};

use super::error::{AppError, AppResult};
use super::url_parts::page_params;

/// The KV binding's name in wrangler.toml.
const BINDING: &str = "STEPWISE_KV";
/// The shortest expiry KV accepts, in seconds.
const MIN_TTL_SECONDS: u64 = 60;

/// One page of a prefix listing: each key's metadata, and the cursor of the next page.
pub struct Listing<M> {
    /// Metadata of the keys of this page, in key order.
    pub items: Vec<M>,
    /// Where the next page starts; `None` on the last page.
    pub cursor: Option<String>,
}

/// The KV namespace of this environment.
pub struct Kv {
    store: KvStore,
}

impl Kv {
    /// The namespace bound to the Worker.
    pub fn new(env: &Env) -> AppResult<Kv> {
        Ok(Kv {
            store: env.kv(BINDING)?,
        })
    }

    /// A text value.
    pub async fn text(&self, key: &str) -> AppResult<Option<String>> {
        self.store.get(key).text().await.map_err(AppError::from)
    }

    /// A JSON value read as `T` (by serde_json from its text: the Worker's one JSON backend;
    /// KV's own JSON reading would link a second deserializer for every type).
    pub async fn json<T: DeserializeOwned>(&self, key: &str) -> AppResult<Option<T>> {
        match self.text(key).await? {
            Some(text) => Ok(Some(serde_json::from_str(&text)?)),
            None => Ok(None),
        }
    }

    /// Stores a text value, expiring after `ttl_seconds` when given.
    pub async fn put_text(
        &self,
        key: &str,
        value: &str,
        ttl_seconds: Option<u64>,
    ) -> AppResult<()> {
        let mut put = self.store.put(key, value).map_err(AppError::from)?;
        if let Some(ttl) = ttl_seconds {
            put = put.expiration_ttl(ttl.max(MIN_TTL_SECONDS));
        }
        put.execute().await.map_err(AppError::from)
    }

    /// Stores a value as JSON text, expiring after `ttl_seconds` when given.
    pub async fn put_json<T: Serialize>(
        &self,
        key: &str,
        value: &T,
        ttl_seconds: Option<u64>,
    ) -> AppResult<()> {
        let json = serde_json::to_string(value)?;
        self.put_text(key, &json, ttl_seconds).await
    }

    /// Stores an empty value whose metadata carries `metadata` (a listing then needs no reads),
    /// expiring after `ttl_seconds`.
    pub async fn put_metadata<M: Serialize>(
        &self,
        key: &str,
        metadata: M,
        ttl_seconds: u64,
    ) -> AppResult<()> {
        let put = self.store.put(key, "").map_err(AppError::from)?;
        let put = put.metadata(metadata).map_err(AppError::from)?;
        put.expiration_ttl(ttl_seconds.max(MIN_TTL_SECONDS))
            .execute()
            .await
            .map_err(AppError::from)
    }

    /// Deletes a key (deleting a missing key is not an error).
    pub async fn delete(&self, key: &str) -> AppResult<()> {
        self.store.delete(key).await.map_err(AppError::from)
    }

    /// The metadata of up to `limit` keys starting with `prefix`, in key order, from `cursor`,
    /// as stored (JSON values: a listing passes them on without reading them).
    pub async fn list(
        &self,
        prefix: &str,
        limit: u64,
        cursor: Option<String>,
    ) -> AppResult<Listing<serde_json::Value>> {
        let mut listing = self.store.list().prefix(prefix.to_owned()).limit(limit);
        if let Some(cursor) = cursor {
            listing = listing.cursor(cursor);
        }
        let page = listing.execute().await.map_err(AppError::from)?;
        let items = page
            .keys
            .into_iter()
            .filter_map(|key| key.metadata)
            .collect();
        let cursor = if page.list_complete {
            None
        } else {
            page.cursor
        };
        Ok(Listing { items, cursor })
    }

    /// The names of up to `limit` keys starting with `prefix`, in key order, from `cursor`.
    pub async fn key_names(
        &self,
        prefix: &str,
        limit: u64,
        cursor: Option<String>,
    ) -> AppResult<Listing<String>> {
        let mut listing = self.store.list().prefix(prefix.to_owned()).limit(limit);
        if let Some(cursor) = cursor {
            listing = listing.cursor(cursor);
        }
        let page = listing.execute().await.map_err(AppError::from)?;
        let items = page.keys.into_iter().map(|key| key.name).collect();
        let cursor = if page.list_complete {
            None
        } else {
            page.cursor
        };
        Ok(Listing { items, cursor })
    }
}

/// Seconds a list entry outlives the day it was written on: an item whose lifetime runs from
/// its last change is listed again on the first change of each day (see [`relist_due`]), so its
/// entry, written for the item's retention plus this margin, never expires before the item.
pub const RELIST_MARGIN_SECONDS: u64 = 86_400;

/// Whether an item changed at `after` (ms) must write its list entry again: it is new (`before`
/// is `None`), or its previous change was on an earlier UTC day.
pub fn relist_due(before: Option<u64>, after: u64) -> bool {
    const DAY_MS: u64 = 86_400_000;
    before.is_none_or(|before| before / DAY_MS != after / DAY_MS)
}

/// One owner-scoped list in KV, newest first: a key per item,
/// `<prefix><owner id>:<inverted creation time>:<id>`, whose metadata is the item's list entry,
/// so a prefix listing is the owner's items newest first and needs no reads. Another owner's
/// prefix is never formed from a request.
pub struct OwnerList {
    prefix: &'static str,
}

/// The item a list key stands for.
pub struct ListedItem<'a> {
    /// The owner's id.
    pub owner: &'a str,
    /// When the item was created (ms since the epoch): the key's order.
    pub created_at: u64,
    /// The item's id.
    pub id: &'a str,
}

impl OwnerList {
    /// The list whose keys start with `prefix` (which ends with `:`).
    pub const fn new(prefix: &'static str) -> OwnerList {
        OwnerList { prefix }
    }

    /// Writes the item's entry, expiring after `ttl_seconds`.
    pub async fn put<M: Serialize>(
        &self,
        kv: &Kv,
        item: ListedItem<'_>,
        entry: M,
        ttl_seconds: u64,
    ) -> AppResult<()> {
        kv.put_metadata(&self.key(&item), entry, ttl_seconds).await
    }

    /// Removes the item's entry.
    pub async fn remove(&self, kv: &Kv, item: ListedItem<'_>) -> AppResult<()> {
        kv.delete(&self.key(&item)).await
    }

    /// A page of the owner's newest entries, as stored.
    pub async fn page(
        &self,
        kv: &Kv,
        owner: &str,
        limit: u64,
        cursor: Option<String>,
    ) -> AppResult<Listing<serde_json::Value>> {
        kv.list(&format!("{}{owner}:", self.prefix), limit, cursor)
            .await
    }

    /// The answer of a list route (`?limit=N&cursor=C`): `{items, cursor}`, the owner's
    /// newest entries first.
    pub async fn respond(&self, req: &Request, env: &Env, owner: &str) -> AppResult<Response> {
        let (limit, cursor) = page_params(&req.inner().url())?;
        let page = self.page(&Kv::new(env)?, owner, limit, cursor).await?;
        let body = serde_json::json!({"items": page.items, "cursor": page.cursor});
        Ok(Response::from_json(&body)?)
    }

    /// A page of the owner's list keys (names), newest first: what an export reads and an
    /// erase deletes, each naming its item ([`OwnerList::id_in`]).
    pub async fn key_page(
        &self,
        kv: &Kv,
        owner: &str,
        limit: u64,
        cursor: Option<String>,
    ) -> AppResult<Listing<String>> {
        kv.key_names(&format!("{}{owner}:", self.prefix), limit, cursor)
            .await
    }

    /// The id of the item a list key names (its last segment).
    pub fn id_in(key: &str) -> &str {
        key.rsplit(':').next().unwrap_or("")
    }

    fn key(&self, item: &ListedItem<'_>) -> String {
        const LATEST: u64 = 9_999_999_999_999;
        format!(
            "{}{}:{:013}:{}",
            self.prefix,
            item.owner,
            LATEST.saturating_sub(item.created_at),
            item.id
        )
    }
}

//! `GET /api/me/export`: everything the caller owns as one JSON document (research jobs,
//! streams with their literature, assistant conversations with their context requests and
//! supplies, guided conversations, help sessions, and the context-request telemetry rows).
//! Each section holds at most `EXPORT_PAGE_ITEMS` items (25 by default, 10 to
//! [`MAX_PAGE_ITEMS`]: KV lists no fewer than 10 keys a page), newest first; a section with more carries a `cursor`, and
//! `?section=<name>&cursor=<c>` answers that section's next page alone. An item that cannot be
//! read stands in its section as `{id, error: {code, message}}`; the rest is exported.

use futures::{StreamExt, stream};
use serde_json::{Map, Value, json};
use worker::{Env, Request, Response};

use super::owned::Section;
use crate::handshake::stats;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::{Kv, OwnerList};
use crate::platform::owner::Owner;
use crate::platform::settings::number;
use crate::platform::url_parts::query_param;

/// Items of one section in one document without `EXPORT_PAGE_ITEMS` (each is one read).
const DEFAULT_PAGE_ITEMS: u64 = 25;
/// The least `EXPORT_PAGE_ITEMS` may be: a KV listing's smallest page.
pub const MIN_PAGE_ITEMS: u64 = 10;
/// The most `EXPORT_PAGE_ITEMS` may be: 6 sections of it stay within a request's subrequests.
pub const MAX_PAGE_ITEMS: u64 = 100;
/// Items read at once.
const PARALLEL_READS: usize = 6;
/// The section of context-request telemetry (D1 rows: ids, times and outcomes).
const TELEMETRY: &str = "context_request_telemetry";

/// `GET /api/me/export[?section=S&cursor=C]`: `{owner, exported_at, complete, <section>:
/// {items, cursor}…}`; `complete` is false while any section has a cursor.
pub async fn get(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let url = req.inner().url();
    let cursor = query_param(&url, "cursor").filter(|c| !c.is_empty());
    let only = match query_param(&url, "section") {
        Some(name) => Some(Section::parse(&name).ok_or_else(|| {
            let names: Vec<&str> = Section::ALL.iter().map(|s| s.name()).collect();
            AppError::invalid_request(format!(
                "unknown section `{name}`; one of: {}",
                names.join(", ")
            ))
        })?),
        None if cursor.is_some() => {
            return Err(AppError::invalid_request(
                "a cursor continues one section: name it with `section`",
            ));
        }
        None => None,
    };
    let kv = Kv::new(env)?;
    let mut document = Map::new();
    document.insert(
        "owner".into(),
        json!({"id": owner.id, "kind": owner.kind, "email": owner.email}),
    );
    document.insert("exported_at".into(), now_ms().into());
    let mut complete = true;
    let sections: Vec<Section> = match only {
        Some(section) => vec![section],
        None => Section::ALL.to_vec(),
    };
    for section in sections {
        let (items, next) = read_section(env, &kv, owner, section, cursor.clone()).await?;
        complete &= next.is_none();
        document.insert(
            section.name().into(),
            json!({"items": items, "cursor": next}),
        );
    }
    if only.is_none() {
        let rows = stats::rows_of(env, &owner.id).await?;
        document.insert(TELEMETRY.into(), json!({"items": rows, "cursor": null}));
    }
    document.insert("complete".into(), complete.into());
    let mut response = Response::from_json(&Value::Object(document))?;
    let headers = response.headers_mut();
    headers.set(
        "content-disposition",
        "attachment; filename=\"stepwise-export.json\"",
    )?;
    headers.set("cache-control", "no-store")?;
    Ok(response)
}

/// A page of a section's items, read a few at a time, and the cursor of the next page.
async fn read_section(
    env: &Env,
    kv: &Kv,
    owner: &Owner,
    section: Section,
    cursor: Option<String>,
) -> AppResult<(Vec<Value>, Option<String>)> {
    let limit = number::<u64>(env, "EXPORT_PAGE_ITEMS")
        .unwrap_or(DEFAULT_PAGE_ITEMS)
        .clamp(MIN_PAGE_ITEMS, MAX_PAGE_ITEMS);
    let continued = cursor.is_some();
    let page = match section.keys(kv, owner, limit, cursor).await {
        Err(_) if continued => {
            return Err(AppError::invalid_request(
                "the cursor is not one this export gave for this section",
            ));
        }
        page => page?,
    };
    let items: Vec<Option<Value>> = stream::iter(page.items.iter())
        .map(|key| async move {
            match section.read(env, kv, owner, key).await {
                Ok(item) => item,
                // One unreadable item does not cost the owner the rest: it is named, with why.
                Err(error) => Some(json!({"id": OwnerList::id_in(key),
                    "error": {"code": error.code(), "message": error.message()}})),
            }
        })
        .buffered(PARALLEL_READS)
        .collect()
        .await;
    Ok((items.into_iter().flatten().collect(), page.cursor))
}

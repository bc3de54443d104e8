//! `DELETE /api/me`: erases everything the caller owns (research jobs with their share pages,
//! streams with their literature, conversations of both kinds with their context requests,
//! help sessions with their operator listings, cached help answers, context-request telemetry).
//! The body must name the owner (`{"confirm": "<owner id>"}`), so no request erases by
//! accident. One request erases at most `ERASE_BATCH_ITEMS` items (50 by default, 10 to
//! [`MAX_BATCH_ITEMS`]) and answers `done: false` while more remain; the client repeats it until `done` (the app does, behind a confirmation).
//! What stays: the day's spending counts of the owner (numbers, no content), which expire with
//! the day and keep the caps whole.

use futures::{StreamExt, TryStreamExt, stream};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use worker::{Env, Request, Response};

use super::owned::Section;
use crate::handshake::stats;
use crate::help::turn::answer_prefix;
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::platform::settings::number;

/// Items one request erases without `ERASE_BATCH_ITEMS` (each is one command to its object,
/// and a key deletion).
const DEFAULT_BATCH_ITEMS: u64 = 50;
/// The least `ERASE_BATCH_ITEMS` may be: a KV listing's smallest page.
pub const MIN_BATCH_ITEMS: u64 = 10;
/// The most `ERASE_BATCH_ITEMS` may be, within a request's subrequests.
pub const MAX_BATCH_ITEMS: u64 = 200;
/// Items erased at once.
const PARALLEL_ERASES: usize = 6;
/// Most pages of cached answers one request deletes.
const MAX_PREFIX_PAGES: usize = 3;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EraseBody {
    confirm: String,
}

/// `DELETE /api/me` with `{"confirm": "<owner id>"}`: `{erased: {<section>: n…}, done}`; 422
/// `confirmation_required` when `confirm` is not the caller's id.
pub async fn delete(mut req: Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let body: EraseBody = read_json(&mut req).await?;
    if body.confirm != owner.id {
        return Err(AppError::confirmation_required(
            "to erase everything you own, send {\"confirm\": \"<your owner id>\"} (GET /api/me)",
        ));
    }
    let kv = Kv::new(env)?;
    let mut erased = Map::new();
    let mut budget = number::<u64>(env, "ERASE_BATCH_ITEMS")
        .unwrap_or(DEFAULT_BATCH_ITEMS)
        .clamp(MIN_BATCH_ITEMS, MAX_BATCH_ITEMS);
    let mut done = true;
    for section in Section::ALL {
        let (count, more) = erase_page(env, &kv, owner, section, budget).await?;
        erased.insert(section.name().into(), count.into());
        budget = budget.saturating_sub(count);
        if more {
            done = false;
            break;
        }
    }
    if done {
        let telemetry = stats::erase_owner(env, &owner.id).await?;
        erased.insert("context_request_telemetry".into(), telemetry.into());
        let (cached, more) = erase_prefix(&kv, &answer_prefix(&owner.id)).await?;
        erased.insert("cached_help_answers".into(), cached.into());
        done = !more;
    }
    let mut response =
        Response::from_json(&json!({"erased": Value::Object(erased), "done": done}))?;
    response.headers_mut().set("cache-control", "no-store")?;
    Ok(response)
}

/// Erases up to `budget` of the section's items; how many, and whether any may remain.
async fn erase_page(
    env: &Env,
    kv: &Kv,
    owner: &Owner,
    section: Section,
    budget: u64,
) -> AppResult<(u64, bool)> {
    if budget == 0 {
        return Ok((0, true));
    }
    let page = section.keys(kv, owner, budget, None).await?;
    let count = page.items.len() as u64;
    stream::iter(page.items.iter())
        .map(|key| section.erase(env, kv, owner, key))
        .buffer_unordered(PARALLEL_ERASES)
        .try_collect::<Vec<()>>()
        .await?;
    Ok((count, page.cursor.is_some() || count >= budget))
}

/// Deletes the keys under `prefix`, up to [`MAX_PREFIX_PAGES`] pages of 100; how many, and
/// whether any may remain.
async fn erase_prefix(kv: &Kv, prefix: &str) -> AppResult<(u64, bool)> {
    let mut count = 0;
    for _ in 0..MAX_PREFIX_PAGES {
        let page = kv.key_names(prefix, 100, None).await?;
        stream::iter(page.items.iter())
            .map(|key| kv.delete(key))
            .buffer_unordered(PARALLEL_ERASES)
            .try_collect::<Vec<()>>()
            .await?;
        count += page.items.len() as u64;
        if page.cursor.is_none() {
            return Ok((count, false));
        }
    }
    Ok((count, true))
}

//! `DELETE /api/me`: erases everything the caller owns (research jobs with their share pages,
//! streams with their literature, conversations of both kinds with their context requests,
//! help sessions with their operator listings, cached help answers, context-request telemetry).
//! The body must name the owner (`{"confirm": "<owner id>"}`), so no request erases by
//! accident. One request erases at most `ERASE_BATCH_ITEMS` items (50 by default, 10 to
//! [`MAX_BATCH_ITEMS`]) and answers `done: false` while more remain (an item whose erasure
//! fails is counted in `failed`, stays listed and is tried again; the others go on); the client repeats it until `done` (the app does, behind a confirmation).
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
/// The most `ERASE_BATCH_ITEMS` may be: a stream takes five KV calls, and a request's
/// subrequests are bounded.
pub const MAX_BATCH_ITEMS: u64 = 100;
/// Items erased at once.
const PARALLEL_ERASES: usize = 6;
/// Most pages of cached answers one request deletes.
const MAX_PREFIX_PAGES: usize = 3;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EraseBody {
    confirm: String,
}

/// `DELETE /api/me` with `{"confirm": "<owner id>"}`: `{erased: {<section>: n…}, failed,
/// done}` (`done` once nothing is left and nothing failed); 422 `confirmation_required` when
/// `confirm` is not the caller's id.
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
    let (mut more, mut failed) = (false, 0);
    for section in Section::ALL {
        let round = erase_page(env, &kv, owner, section, budget).await?;
        erased.insert(section.name().into(), round.erased.into());
        failed += round.failed;
        budget = budget.saturating_sub(round.erased + round.failed);
        if round.more {
            more = true;
            break;
        }
    }
    if !more {
        let telemetry = stats::erase_owner(env, &owner.id).await?;
        erased.insert("context_request_telemetry".into(), telemetry.into());
        let (cached, left) = erase_prefix(&kv, &answer_prefix(&owner.id)).await?;
        erased.insert("cached_help_answers".into(), cached.into());
        more = left;
    }
    let done = !more && failed == 0;
    let body = json!({"erased": Value::Object(erased), "failed": failed, "done": done});
    let mut response = Response::from_json(&body)?;
    response.headers_mut().set("cache-control", "no-store")?;
    Ok(response)
}

/// What one section's part of a round did.
struct Round {
    /// Items erased.
    erased: u64,
    /// Items whose erasure failed (logged; they stay listed and are tried again next round).
    failed: u64,
    /// Whether items may remain beyond this round's budget.
    more: bool,
}

/// Erases up to `budget` of the section's items. An item that fails does not stop the others:
/// it is counted, logged, and stays listed for the next round.
async fn erase_page(
    env: &Env,
    kv: &Kv,
    owner: &Owner,
    section: Section,
    budget: u64,
) -> AppResult<Round> {
    if budget == 0 {
        return Ok(Round {
            erased: 0,
            failed: 0,
            more: true,
        });
    }
    // KV lists no fewer than MIN_BATCH_ITEMS keys a page: ask for that, erase `budget`.
    let page = section
        .keys(kv, owner, budget.max(MIN_BATCH_ITEMS), None)
        .await?;
    let listed = page.items.len() as u64;
    let outcomes: Vec<AppResult<()>> = stream::iter(page.items.iter().take(budget as usize))
        .map(|key| section.erase(env, kv, owner, key))
        .buffer_unordered(PARALLEL_ERASES)
        .collect()
        .await;
    let mut round = Round {
        erased: 0,
        failed: 0,
        more: page.cursor.is_some() || listed > budget,
    };
    for outcome in outcomes {
        match outcome {
            Ok(()) => round.erased += 1,
            Err(error) => {
                round.failed += 1;
                worker::console_warn!("erase: a {} item failed: {error}", section.name());
            }
        }
    }
    Ok(round)
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

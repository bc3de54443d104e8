//! Published reports: the read-only HTML page of a completed job in KV (written when its owner
//! publishes it, expiring with the share, deleted when withdrawn), and `GET /share/:id`, which
//! answers a visitor of a link that is not shared (withdrawn, expired, or never one) with one
//! small HTML page, the same for all of them.

use stepwise_core::research::{Research, share_html};
use worker::{Env, Headers, Response, console_error};

use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::ids;
use crate::platform::kv::Kv;

/// The page of a link that is not shared. One sentence, whatever the reason: a visitor learns
/// nothing of whether the link was ever shared, nor anything of the job.
const NOT_SHARED_PAGE: &str = concat!(
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
    "<meta name=\"robots\" content=\"noindex\"><title>Report not shared</title><style>",
    "body{margin:0;min-height:100vh;display:grid;place-items:center;background:#f7f7f5;",
    "color:#1d1d1b;font:16px/1.5 system-ui,-apple-system,\"Segoe UI\",sans-serif}",
    "main{margin:1rem;padding:1.5rem 2rem;max-width:32rem;background:#fff;",
    "border:1px solid #d9d9d4;border-radius:8px}h1{font-size:1.25rem;margin:0}",
    "</style></head><body><main><h1>This report is no longer shared</h1></main></body></html>\n",
);

/// The headers of both pages: HTML with no script, framing, forms or referrer.
fn page_headers(cache: &str) -> AppResult<Headers> {
    let headers = Headers::new();
    headers.set("content-type", "text/html; charset=utf-8")?;
    headers.set("cache-control", cache)?;
    headers.set(
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    )?;
    headers.set("x-content-type-options", "nosniff")?;
    headers.set("referrer-policy", "no-referrer")?;
    Ok(headers)
}

fn key(share_id: &str) -> String {
    format!("share:{share_id}")
}

/// Writes the job's report page under its share id, expiring with the share (twice at most: a
/// failure is logged, and the share stays recorded).
pub async fn write_page(kv: &Kv, research: &Research) {
    let Some(share) = &research.share_info else {
        return;
    };
    let page = share_html(research);
    let ttl_seconds = share.expires_at.saturating_sub(now_ms()) / 1000;
    let mut last = None;
    for _ in 0..2 {
        match kv
            .put_text(&key(&share.share_id), &page, Some(ttl_seconds))
            .await
        {
            Ok(()) => return,
            Err(error) => last = Some(error),
        }
    }
    if let Some(error) = last {
        console_error!("research {}: share page not written: {error}", research.id);
    }
}

/// Deletes a withdrawn report page.
pub async fn delete_page(kv: &Kv, share_id: &str) {
    if let Err(error) = kv.delete(&key(share_id)).await {
        console_error!("share {share_id}: page not deleted: {error}");
    }
}

/// `GET /share/:id`: the published read-only report page (no script, no framing, no forms), or,
/// for any id that has none, the not-shared page with status 404. Neither is kept by caches
/// without asking again: a withdrawn report must go at once, a link shared again come back.
pub async fn get(env: &Env, id: &str) -> AppResult<Response> {
    let page = if ids::is_id(id) {
        Kv::new(env)?.text(&key(id)).await?
    } else {
        None
    };
    match page {
        Some(page) => Ok(Response::ok(page)?.with_headers(page_headers("private, no-cache")?)),
        None => Ok(Response::ok(NOT_SHARED_PAGE)?
            .with_status(404)
            .with_headers(page_headers("no-store")?)),
    }
}

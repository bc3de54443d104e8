//! Published reports: the read-only HTML page of a completed job in KV (written when its owner
//! publishes it, expiring with the share, deleted when withdrawn), and `GET /share/:id`.

use stepwise_core::research::{Research, share_html};
use worker::{Env, Headers, Response, console_error};

use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;

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

/// `GET /share/:id`: the published read-only report page (no script, no framing, no forms).
pub async fn get(env: &Env, id: &str) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("report"));
    }
    let page = Kv::new(env)?
        .text(&key(id))
        .await?
        .ok_or_else(|| AppError::not_found("report"))?;
    let headers = Headers::new();
    headers.set("content-type", "text/html; charset=utf-8")?;
    headers.set("cache-control", "private, max-age=60")?;
    headers.set(
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    )?;
    headers.set("x-content-type-options", "nosniff")?;
    headers.set("referrer-policy", "no-referrer")?;
    Ok(Response::ok(page)?.with_headers(headers))
}

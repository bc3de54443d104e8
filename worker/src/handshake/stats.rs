//! Telemetry of context requests (context-handshake.md §5.5) in D1 (`HELP_DB`, table
//! `context_requests`): one row a request, written when it is issued and when it ends. `GET
//! /api/assistant/stats` answers the caller's counts (issued, fulfilled automatically,
//! fulfilled by the user, skipped, fallen back, forced) and median time to fulfil; `GET
//! /api/assistant/stats/total` (admin token) the totals of every owner. Rows are kept for
//! `TELEMETRY_RETENTION_DAYS` (90 by default) and hold ids, times and outcomes, never text.

use serde_json::{Value, json};
use stepwise_core::handshake::ContextRequest;
use wasm_bindgen::JsValue;
use worker::{D1Database, Env, Response};

use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::settings::number;

const BINDING: &str = "HELP_DB";

fn db(env: &Env) -> AppResult<D1Database> {
    Ok(env.d1(BINDING)?)
}

/// Records `request` of `owner` on `conversation` as it stands (issued, or ended). Failures
/// are logged: telemetry never fails a turn.
pub async fn record(env: &Env, owner: &str, conversation: &str, request: &ContextRequest) {
    let written = async {
        let origin = serde_json::to_value(request.origin)?;
        let statement = db(env)?
            .prepare(
                "INSERT INTO context_requests (request_id, owner, conversation_id, origin, issued_at, \
                 outcome, resolved_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(request_id) \
                 DO UPDATE SET outcome = excluded.outcome, resolved_at = excluded.resolved_at",
            )
            .bind(&[
                request.request_id.as_str().into(),
                owner.into(),
                conversation.into(),
                origin.as_str().unwrap_or("").into(),
                JsValue::from_f64(request.created_at as f64),
                request.outcome().map_or(JsValue::NULL, |o| JsValue::from(o.as_str())),
                request
                    .resolved_at
                    .map_or(JsValue::NULL, |t| JsValue::from_f64(t as f64)),
            ])?;
        statement.run().await?;
        if request.outcome().is_none() {
            prune(env).await?;
        }
        AppResult::Ok(())
    };
    if let Err(error) = written.await {
        worker::console_error!(
            "context request {}: telemetry not written: {error}",
            request.request_id
        );
    }
}

/// Default days a request's telemetry is kept.
const DEFAULT_RETENTION_DAYS: f64 = 90.0;

/// Deletes the rows of requests issued more than `TELEMETRY_RETENTION_DAYS` ago (run as each
/// request is issued, so the table never holds more than that window).
async fn prune(env: &Env) -> AppResult<()> {
    let days: f64 = number(env, "TELEMETRY_RETENTION_DAYS").unwrap_or(DEFAULT_RETENTION_DAYS);
    let cutoff = now_ms() as f64 - days.max(0.0) * 86_400_000.0;
    db(env)?
        .prepare("DELETE FROM context_requests WHERE issued_at < ?1")
        .bind(&[JsValue::from_f64(cutoff)])?
        .run()
        .await?;
    Ok(())
}

const COUNTS: &str = "SELECT json_object('issued', count(*), \
'fulfilled_automatically', coalesce(sum(outcome = 'auto'), 0), \
'fulfilled_by_user', coalesce(sum(outcome = 'user'), 0), \
'skipped', coalesce(sum(outcome = 'skipped'), 0), \
'fallen_back', coalesce(sum(outcome = 'fallback'), 0), \
'forced', coalesce(sum(outcome = 'forced'), 0), \
'open', coalesce(sum(outcome IS NULL), 0)) AS j FROM context_requests";

const MEDIAN: &str = "SELECT resolved_at - issued_at AS ms FROM context_requests \
WHERE outcome IN ('auto', 'user')";

async fn figures(db: &D1Database, owner: Option<&str>) -> AppResult<Value> {
    let (filter, binds): (&str, Vec<JsValue>) = match owner {
        Some(owner) => (" WHERE owner = ?1", vec![owner.into()]),
        None => ("", Vec::new()),
    };
    let text: Option<String> = db
        .prepare(format!("{COUNTS}{filter}"))
        .bind(&binds)?
        .first(Some("j"))
        .await?;
    let mut counts: Value = serde_json::from_str(&text.unwrap_or_else(|| "{}".into()))?;
    let and = if owner.is_some() {
        " AND owner = ?1"
    } else {
        ""
    };
    let count_sql = format!("SELECT count(*) AS n FROM ({MEDIAN}{and})");
    let n: Option<f64> = db.prepare(count_sql).bind(&binds)?.first(Some("n")).await?;
    let n = n.unwrap_or(0.0) as u64;
    let median = if n == 0 {
        Value::Null
    } else {
        let sql = format!("{MEDIAN}{and} ORDER BY ms LIMIT 1 OFFSET {}", (n - 1) / 2);
        let ms: Option<f64> = db.prepare(sql).bind(&binds)?.first(Some("ms")).await?;
        ms.map_or(Value::Null, |v| json!(v as u64))
    };
    counts["median_ms_to_fulfil"] = median;
    Ok(counts)
}

/// `GET /api/assistant/stats`: the caller's figures.
pub async fn get(env: &Env, owner: &str) -> AppResult<Response> {
    let body = json!({"owner": figures(&db(env)?, Some(owner)).await?});
    Ok(Response::from_json(&body)?)
}

/// `GET /api/assistant/stats/total` (admin token): every owner's figures together.
pub async fn get_total(env: &Env) -> AppResult<Response> {
    let body = json!({"total": figures(&db(env)?, None).await?});
    Ok(Response::from_json(&body)?)
}

/// Most telemetry rows an owner's export holds (the newest; at the daily caps an owner can make
/// more in the retention window only by running every call into a context request).
const MAX_EXPORTED_ROWS: u32 = 5_000;

/// The owner's telemetry rows, newest first, for their export (`GET /api/me/export`).
pub async fn rows_of(env: &Env, owner: &str) -> AppResult<Value> {
    let sql = format!(
        "SELECT json_group_array(json_object('request_id', request_id, 'conversation_id', \
         conversation_id, 'origin', origin, 'issued_at', issued_at, 'outcome', outcome, \
         'resolved_at', resolved_at)) AS j FROM (SELECT * FROM context_requests WHERE owner = ?1 \
         ORDER BY issued_at DESC LIMIT {MAX_EXPORTED_ROWS})"
    );
    let text: Option<String> = db(env)?
        .prepare(sql)
        .bind(&[owner.into()])?
        .first(Some("j"))
        .await?;
    Ok(serde_json::from_str(&text.unwrap_or_else(|| "[]".into()))?)
}

/// Deletes every telemetry row of the owner (`DELETE /api/me`); the number deleted.
pub async fn erase_owner(env: &Env, owner: &str) -> AppResult<u64> {
    let result = db(env)?
        .prepare("DELETE FROM context_requests WHERE owner = ?1")
        .bind(&[owner.into()])?
        .run()
        .await?;
    Ok(result.meta()?.and_then(|m| m.changes).unwrap_or(0) as u64)
}

//! The `research-events` queue's consumer: lifecycle events of research jobs
//! ([`stepwise_core::research::ResearchEvent`]). A `published` event (the owner published a
//! report) is posted to the optional webhook `NOTIFY_WEBHOOK_URL`, signed with `WEBHOOK_SECRET`
//! (`X-Stepwise-Signature: sha256=<hex HMAC-SHA256 of the body>`) and carrying
//! `Idempotency-Key: <share id>`, so a receiver can check it and drop a repeated delivery. A
//! failed delivery is retried by the queue.

use std::time::Duration;

use serde_json::Value;
use stepwise_core::owner::hex;
use worker::{Env, Headers, Method, Request, RequestInit, console_error, console_log};

use crate::platform::crypto;
use crate::platform::deadline::{FetchFailure, fetch_within};
use crate::platform::error::{AppError, AppResult};
use crate::platform::settings::var;

/// Longest wait for the webhook's answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-stepwise-signature";

/// Handles one `research_event` message (`{"kind", "event"}`); an error asks the queue to
/// deliver it again.
pub async fn handle(env: &Env, message: &Value) -> AppResult<()> {
    let event = &message["event"];
    if event["type"] != "published" {
        return Ok(());
    }
    let share_id = event["share_id"].as_str().unwrap_or_default();
    let Some(url) = var(env, "NOTIFY_WEBHOOK_URL") else {
        return Ok(());
    };
    let secret = env.secret("WEBHOOK_SECRET").ok().map(|s| s.to_string());
    let Some(secret) = secret.filter(|s| !s.is_empty()) else {
        // Unsigned notifications could be forged by anyone who knows the URL: none are sent.
        console_error!("NOTIFY_WEBHOOK_URL is set without WEBHOOK_SECRET: webhook not sent");
        return Ok(());
    };
    let body = format!(r#"{{"type":"research.published","event":{event}}}"#);
    let signature = hex(&crypto::hmac_sha256(secret.as_bytes(), body.as_bytes()).await?);
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    headers.set(SIGNATURE_HEADER, &format!("sha256={signature}"))?;
    headers.set("idempotency-key", share_id)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body.into()));
    let request = Request::new_with_init(&url, &init)?;
    let response = match fetch_within(request, WEBHOOK_TIMEOUT).await {
        Ok(response) => response,
        Err(FetchFailure::Unreachable) => return Err(AppError::internal(&"webhook unreachable")),
        Err(FetchFailure::TimedOut) => return Err(AppError::internal(&"webhook timed out")),
    };
    let status = response.status_code();
    if !(200..300).contains(&status) {
        return Err(AppError::internal(&format_args!(
            "webhook answered {status}"
        )));
    }
    console_log!("webhook notified of published report {share_id}");
    Ok(())
}

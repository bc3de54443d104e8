//! The optional operator webhook `NOTIFY_WEBHOOK_URL`: a JSON body signed with `WEBHOOK_SECRET`
//! (`X-Stepwise-Signature: sha256=<hex HMAC-SHA256 of the body>`) and carrying an
//! `Idempotency-Key`, so a receiver can check it and drop a repeated delivery. Called from the
//! events queue's consumer; an error asks the queue to deliver the event again.

use std::time::Duration;

use stepwise_core::owner::hex;
use worker::{Env, Headers, Method, Request, RequestInit, console_error};

use super::crypto;
use super::deadline::{FetchFailure, fetch_within};
use super::error::{AppError, AppResult};
use super::settings::var;

/// Longest wait for the webhook's answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-stepwise-signature";

/// Posts `body` to the webhook, signed; `Ok(false)` when no webhook is configured (or it is
/// configured without a secret: unsigned notifications could be forged, so none are sent).
pub async fn deliver(env: &Env, body: &str, idempotency_key: &str) -> AppResult<bool> {
    let Some(url) = var(env, "NOTIFY_WEBHOOK_URL") else {
        return Ok(false);
    };
    let secret = env.secret("WEBHOOK_SECRET").ok().map(|s| s.to_string());
    let Some(secret) = secret.filter(|s| !s.is_empty()) else {
        console_error!("NOTIFY_WEBHOOK_URL is set without WEBHOOK_SECRET: webhook not sent");
        return Ok(false);
    };
    let signature = hex(&crypto::hmac_sha256(secret.as_bytes(), body.as_bytes()).await?);
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    headers.set(SIGNATURE_HEADER, &format!("sha256={signature}"))?;
    headers.set("idempotency-key", idempotency_key)?;
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
    Ok(true)
}

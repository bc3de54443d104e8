//! The `research-events` queue consumer: lifecycle events of research jobs
//! ([`stepwise_core::research::ResearchEvent`]). A `published` event
//! is posted to the optional webhook `NOTIFY_WEBHOOK_URL` (the spec's notification with the share
//! URL, to any receiver); a failed delivery is retried by the queue.

use std::time::Duration;

use futures_util::future::{Either, select};
use worker::{Delay, Env, Fetch, Headers, Method, Request, RequestInit, console_log};

use crate::config::var;

/// Longest wait for the webhook's answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Handles one lifecycle event; an error asks the queue to deliver it again.
/// The event is read as a JSON value: only its `type` matters here, and the body is forwarded.
pub async fn handle_event(env: &Env, event: &serde_json::Value) -> Result<(), String> {
    if event["type"] != "published" {
        return Ok(());
    }
    let Some(url) = var(env, "NOTIFY_WEBHOOK_URL") else {
        return Ok(());
    };
    let body = serde_json::json!({"type": "research.published", "event": event}).to_string();
    let headers = Headers::new();
    headers
        .set("content-type", "application/json")
        .map_err(|e| e.to_string())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body.into()));
    let request = Request::new_with_init(&url, &init).map_err(|e| e.to_string())?;
    let fetch = Fetch::Request(request);
    let sent = fetch.send();
    let response = match select(Box::pin(sent), Box::pin(Delay::from(WEBHOOK_TIMEOUT))).await {
        Either::Left((response, _)) => response.map_err(|e| format!("webhook unreachable: {e}"))?,
        Either::Right(_) => return Err("webhook timed out".into()),
    };
    let status = response.status_code();
    if !(200..300).contains(&status) {
        return Err(format!("webhook answered {status}"));
    }
    console_log!("research {}: webhook notified", event["research_id"]);
    Ok(())
}

//! The `research-events` queue consumer: lifecycle events of research jobs
//! ([`stepwise_core::research::ResearchEvent`]). A `published` event is posted to the optional
//! webhook `NOTIFY_WEBHOOK_URL` (the spec's notification with the share URL, to any receiver);
//! a failed delivery is retried by the queue.

use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use worker::{Env, Headers, Method, Request, RequestInit, console_log};

use crate::platform::deadline::{FetchFailure, fetch_within};
use crate::platform::error::{AppError, AppResult};
use crate::platform::settings::var;

/// Longest wait for the webhook's answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// What the consumer reads of an event: its type. The event itself is forwarded as it came
/// (reading the whole internally tagged enum would buffer it through serde's `Content`).
#[derive(Deserialize)]
struct EventHead {
    #[serde(rename = "type")]
    kind: String,
}

/// Handles one lifecycle event (the queue message's JSON text); an error asks the queue to
/// deliver it again.
pub async fn handle(env: &Env, message: &str) -> AppResult<()> {
    let head: EventHead = serde_json::from_str(message)?;
    if head.kind != "published" {
        return Ok(());
    }
    let Some(url) = var(env, "NOTIFY_WEBHOOK_URL") else {
        return Ok(());
    };
    let event: &RawValue = serde_json::from_str(message)?;
    let body = format!(r#"{{"type":"research.published","event":{}}}"#, event.get());
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
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
    console_log!("webhook notified of a published report");
    Ok(())
}

//! The `research-events` queue's consumer for research jobs: lifecycle events
//! ([`stepwise_core::research::ResearchEvent`]). A `published` event (the owner published a
//! report) is posted to the operator webhook (`platform::webhook`: signed, with
//! `Idempotency-Key: <share id>`). A failed delivery is retried by the queue.

use serde_json::Value;
use worker::{Env, console_log};

use crate::platform::error::AppResult;
use crate::platform::webhook;

/// Handles one `research_event` message (`{"kind", "event"}`); an error asks the queue to
/// deliver it again.
pub async fn handle(env: &Env, message: &Value) -> AppResult<()> {
    let event = &message["event"];
    if event["type"] != "published" {
        return Ok(());
    }
    let share_id = event["share_id"].as_str().unwrap_or_default();
    let body = format!(r#"{{"type":"research.published","event":{event}}}"#);
    if webhook::deliver(env, &body, share_id).await? {
        console_log!("webhook notified of published report {share_id}");
    }
    Ok(())
}

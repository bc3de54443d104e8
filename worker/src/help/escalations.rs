//! Handoffs to a person: the operators' list of escalated sessions (KV, newest first, an entry
//! per session carrying no user text), the `session.escalated` event sent through the events
//! queue to the signed webhook, and the operator routes (`GET /api/help/escalations`,
//! `POST /api/help/escalations/:id/resolve`, admin token) that read transcripts and resolve.

use serde_json::{Value, json};
use stepwise_core::help::session::{Escalation, SessionView};
use stepwise_core::help::{Caller, HelpCommand, HelpSession};
use worker::{Env, Request, Response, console_log};

use super::client;
use crate::conversations::client::retention_ms;
use crate::platform::body::require_json;
use crate::platform::error::AppResult;
use crate::platform::kv::{Kv, ListedItem, OwnerList};
use crate::platform::queues;
use crate::platform::url_parts::page_params;
use crate::platform::webhook;

/// The operators' list: one key per escalated session under a fixed list owner.
const LIST: OwnerList = OwnerList::new("help-escalation:");
const OPERATORS: &str = "operators";
/// The queue binding of lifecycle events (shared with research jobs).
const EVENTS_QUEUE: &str = "RESEARCH_EVENTS";
/// The message kind of help-desk events.
pub const HELP_EVENT: &str = "help_event";
/// Most sessions (with transcripts) on one page of the operator view.
const MAX_PAGE: u64 = 20;

fn item<'a>(id: &'a str, escalation: &Escalation) -> ListedItem<'a> {
    ListedItem {
        owner: OPERATORS,
        created_at: escalation.at,
        id,
    }
}

/// Lists an escalated session for operators and queues its `session.escalated` event. Run by
/// the session's object (its alarm), which retries until both succeeded; listing again is
/// harmless, and the webhook's receiver drops a repeated event by its idempotency key.
pub async fn announce(env: &Env, session: &SessionView) -> AppResult<()> {
    let Some(escalation) = &session.escalation else {
        return Ok(());
    };
    let entry = json!({"session_id": session.id, "at": escalation.at, "reason": escalation.reason,
        "doc": escalation.doc.as_ref().map(|d| &d.title)});
    let ttl = retention_ms(env) / 1000;
    LIST.put(&Kv::new(env)?, item(&session.id, escalation), &entry, ttl)
        .await?;
    let event = json!({"type": "session.escalated", "session_id": session.id,
        "at": escalation.at, "reason": escalation.reason,
        "doc_id": escalation.doc.as_ref().map(|d| &d.id)});
    let message = json!({"kind": HELP_EVENT, "event": event}).to_string();
    queues::send_all(env, EVENTS_QUEUE, &[message], 1).await
}

/// Removes a session from the operators' list (resolved, or erased past its retention).
pub async fn unlist(kv: &Kv, session: &HelpSession) -> AppResult<()> {
    match &session.escalation {
        Some(escalation) => LIST.remove(kv, item(&session.id, escalation)).await,
        None => Ok(()),
    }
}

/// Handles one `help_event` message from the events queue: posts it to the webhook
/// (`Idempotency-Key: help-<session id>-<at>`); an error asks the queue to deliver it again.
pub async fn deliver(env: &Env, message: &Value) -> AppResult<()> {
    let event = &message["event"];
    let key = format!(
        "help-{}-{}",
        event["session_id"].as_str().unwrap_or(""),
        event["at"]
    );
    let body = json!({"type": event["type"], "event": event}).to_string();
    if webhook::deliver(env, &body, &key).await? {
        console_log!("webhook notified of escalated help session");
    }
    Ok(())
}

/// `GET /api/help/escalations?limit=&cursor=`: escalated sessions, newest first, each with its
/// transcript, clarification answers and status.
pub async fn list(req: &Request, env: &Env) -> AppResult<Response> {
    let (limit, cursor) = page_params(&req.inner().url())?;
    let page = LIST
        .page(&Kv::new(env)?, OPERATORS, limit.min(MAX_PAGE), cursor)
        .await?;
    let mut items = Vec::with_capacity(page.items.len());
    for entry in &page.items {
        let Some(id) = entry["session_id"].as_str() else {
            continue;
        };
        // A session erased meanwhile is left out.
        if let Ok(reply) = client::send(env, id, Caller::Operator, HelpCommand::Read).await {
            items.push(reply.session);
        }
    }
    Ok(Response::from_json(
        &json!({"items": items, "cursor": page.cursor}),
    )?)
}

/// `POST /api/help/escalations/:id/resolve`: the operator closes the session.
pub async fn resolve(req: &Request, env: &Env, id: &str) -> AppResult<Response> {
    require_json(req)?;
    let reply = client::send(env, id, Caller::Operator, HelpCommand::Resolve).await?;
    if let Some(escalation) = &reply.session.escalation {
        let _ = LIST.remove(&Kv::new(env)?, item(id, escalation)).await;
    }
    Ok(Response::from_json(&reply.session)?)
}

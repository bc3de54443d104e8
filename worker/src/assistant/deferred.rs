//! Deferred assistant turns (context-handshake.md §4.1): supplies that resume one (`POST
//! /api/assistant/context-supply`), "Run without context" (`POST
//! /api/assistant/conversations/:id/requests/:rid/force`) and the fallback turn the
//! conversation's alarm queues at the SLA. Each has the conversation's object run the deferred
//! turn, answered as JSON, or streamed to an AG-UI run that resumes the request.

use serde::Deserialize;
use serde_json::json;
use stepwise_core::conversation::{Command, Conversation, ConversationError, Reply, SlotSupply};
use stepwise_core::handshake::{
    self, ContextRequest, MAX_SUPPLY_CHARS, RequestStatus, Supplier, Supply,
};
use stepwise_core::owner::OwnerKind;
use worker::{Env, Request, Response};

use super::host::{self, DeliveryOrder, Ordered, TurnOrder};
use crate::conversations::client;
use crate::handshake::slice_owned;
use crate::platform::body::read_json;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;

/// Most payloads in one supply.
const MAX_PAYLOADS: usize = 8;

/// One payload of a supply: a slot and either an artifact's key path or typed text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Payload {
    slot: String,
    #[serde(default)]
    key_path: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

/// The body of `POST /api/assistant/context-supply`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupplyBody {
    /// The conversation.
    pub conversation_id: String,
    /// Its waiting request.
    pub request_id: String,
    /// The slots supplied.
    #[serde(default)]
    pub payloads: Vec<Payload>,
    /// The slots skipped.
    #[serde(default)]
    pub skip: Vec<String>,
}

/// `POST /api/assistant/context-supply`: supplies (and skips) slots of the waiting request,
/// all or nothing; once its required slots are met, the deferred turn runs and its answer is
/// returned (`status: "answered"`), else `status: "waiting_context"` with the request. With
/// neither payloads nor skips, a request whose slots are all met (its answer failed, so it is
/// open again) runs again on what was supplied.
pub async fn supply(mut req: Request, env: Env, owner: &Owner) -> AppResult<Response> {
    let body: SupplyBody = read_json(&mut req).await?;
    supply_as(&env, owner, body, DeliveryOrder::Json).await
}

/// Supplies and skips slots as `body` says, answered as `delivery` asks. A streamed answer (an
/// AG-UI run resuming the request) needs every required slot met by this supply, and the
/// conversation free to run the turn: otherwise it is refused (409 `context_missing`,
/// `turn_in_progress`, `conversation_full`) and nothing is stored. A turn that fails once begun
/// leaves the supply stored and the request open again, as the JSON route does.
pub async fn supply_as(
    env: &Env,
    owner: &Owner,
    body: SupplyBody,
    delivery: DeliveryOrder,
) -> AppResult<Response> {
    if body.payloads.len() + body.skip.len() > MAX_PAYLOADS {
        return Err(AppError::invalid_request(format!(
            "at most {MAX_PAYLOADS} payloads and skips together"
        )));
    }
    let (record, request) = waiting(env, owner, &body.conversation_id, &body.request_id).await?;
    // Neither: the turn of a request whose slots are all met, whose answer failed, runs again
    // on what was supplied (a client that no longer holds the supply's text may ask so).
    if body.payloads.is_empty() && body.skip.is_empty() && !request.ready() {
        return Err(AppError::invalid_request(
            "send `payloads`, `skip`, or both (neither only runs again a request whose slots are all met)",
        ));
    }
    let now = now_ms();
    let mut supplies = Vec::new();
    for payload in &body.payloads {
        let slot = request
            .slots
            .iter()
            .find(|s| s.slot == payload.slot)
            .ok_or_else(|| {
                AppError::from(stepwise_core::conversation::ConversationError::Supply(
                    handshake::SupplyError::UnknownSlot(payload.slot.clone()),
                ))
            })?;
        let supply = match (&payload.key_path, &payload.text) {
            (Some(path), None) => {
                let excerpt = slice_owned(env, owner, path, slot.size_limit).await?;
                Supply {
                    by: Supplier::User,
                    at: now,
                    key_path: Some(path.clone()),
                    truncated: excerpt.truncated(),
                    text: excerpt.text,
                }
            }
            (None, Some(text)) => {
                if text.chars().count() > MAX_SUPPLY_CHARS {
                    return Err(AppError::body_too_large(MAX_SUPPLY_CHARS));
                }
                Supply {
                    by: Supplier::User,
                    at: now,
                    key_path: None,
                    truncated: false,
                    text: text.trim().to_owned(),
                }
            }
            _ => {
                return Err(AppError::invalid_request(format!(
                    "payload for `{:.32}` needs exactly one of `key_path` and `text`",
                    payload.slot
                )));
            }
        };
        supplies.push(SlotSupply {
            slot: payload.slot.clone(),
            supply,
        });
    }
    if !matches!(delivery, DeliveryOrder::Json) {
        // Judged first, on a copy: a streamed answer runs the turn now, or nothing is kept.
        record.may_begin(now)?;
        let mut tried = request.clone();
        for given in &supplies {
            tried
                .supply(&given.slot, given.supply.clone())
                .map_err(ConversationError::Supply)?;
        }
        for slot in &body.skip {
            tried.skip(slot).map_err(ConversationError::Supply)?;
        }
        if !tried.ready() {
            return Err(ConversationError::ContextMissing.into());
        }
    }
    let command = Command::Supply {
        request_id: body.request_id.clone(),
        supplies,
        skips: body.skip.clone(),
    };
    let Reply::Conversation(record) =
        client::send(env, &body.conversation_id, &owner.id, &command).await?
    else {
        return Err(AppError::internal(
            &"the conversation answered another kind of reply",
        ));
    };
    let request = record
        .requests
        .iter()
        .find(|r| r.request_id == body.request_id)
        .cloned()
        .ok_or_else(|| AppError::internal(&"the supplied request is gone"))?;
    if !request.ready() {
        return Ok(Response::from_json(
            &json!({"status": "waiting_context", "request": request}),
        )?);
    }
    let (id, request_id) = (&body.conversation_id, &body.request_id);
    answer(env, owner, id, request_id, None, delivery).await
}

/// `POST /api/assistant/conversations/:id/requests/:rid/force`: "Run without context".
pub async fn force(env: Env, owner: &Owner, id: &str, request_id: &str) -> AppResult<Response> {
    force_as(&env, owner, id, request_id, DeliveryOrder::Json).await
}

/// "Run without context" for request `request_id` of conversation `id`, answered as `delivery`
/// asks.
pub async fn force_as(
    env: &Env,
    owner: &Owner,
    id: &str,
    request_id: &str,
    delivery: DeliveryOrder,
) -> AppResult<Response> {
    let command = Command::Force {
        request_id: request_id.to_owned(),
    };
    client::send(env, id, &owner.id, &command).await?;
    let warning = "Answered without the context asked for: you chose to run without it.";
    answer(env, owner, id, request_id, Some(warning), delivery).await
}

/// The fallback turn queued by the conversation's alarm at the SLA (`context_fallback`).
pub async fn fallback(env: &Env, message: &serde_json::Value) -> AppResult<()> {
    let text = |key: &str| message[key].as_str().unwrap_or("").to_owned();
    let owner = Owner {
        id: text("owner"),
        kind: OwnerKind::Anonymous,
        email: None,
        network: None,
        verified: false,
    };
    let warning = "Answered without the context asked for: it was not supplied in time.";
    let mut response = answer(
        env,
        &owner,
        &text("conversation_id"),
        &text("request_id"),
        Some(warning),
        DeliveryOrder::Json,
    )
    .await?;
    let status = response.status_code();
    if status < 400 {
        return Ok(());
    }
    let error = AppError::relayed(status, &response.text().await?);
    // Already answered (a supply or a force won the race), stopped by its owner once resumed, or
    // deleted: nothing to do. An
    // identity that never passed the Turnstile check gets no model call from the server either
    // (retrying would not change that): the request stays open for the owner to supply or force.
    if matches!(
        error.code(),
        "context_request_not_found"
            | "conversation_not_found"
            | "turn_in_progress"
            | "turn_stopped"
            | "challenge_required"
    ) {
        return Ok(());
    }
    Err(error)
}

/// Has the conversation's object run the deferred turn; answers `{status: "answered",
/// request, answer}`, or the turn's stream when `delivery` is one.
async fn answer(
    env: &Env,
    owner: &Owner,
    id: &str,
    request_id: &str,
    warning: Option<&str>,
    delivery: DeliveryOrder,
) -> AppResult<Response> {
    let order = TurnOrder {
        owner: owner.clone(),
        conversation_id: id.to_owned(),
        start: false,
        what: Ordered::Resume {
            request_id: request_id.to_owned(),
            warning: warning.map(str::to_owned),
        },
        delivery,
    };
    host::send(env, &order).await
}

/// The caller's conversation `id` and its waiting request `request_id`.
async fn waiting(
    env: &Env,
    owner: &Owner,
    id: &str,
    request_id: &str,
) -> AppResult<(Conversation, ContextRequest)> {
    let Reply::Conversation(record) =
        client::send(env, id, &owner.id, &Command::Read { token_hash: None }).await?
    else {
        return Err(AppError::internal(
            &"the conversation answered another kind of reply",
        ));
    };
    let waiting = record
        .waiting
        .as_ref()
        .is_some_and(|w| w.request_id == request_id);
    let request = record
        .requests
        .iter()
        .find(|r| r.request_id == request_id && waiting && r.status == RequestStatus::Open)
        .cloned()
        .ok_or(ConversationError::NoSuchRequest)?;
    Ok((*record, request))
}

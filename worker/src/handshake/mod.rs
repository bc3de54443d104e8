//! Context on request at the edge (context-handshake.md): the owner's artifacts (`GET
//! /api/assistant/artifacts`), supplies that resume a deferred turn (`POST
//! /api/assistant/context-supply`), "Run without context" (`POST
//! /api/assistant/conversations/:id/requests/:rid/force`), the fallback turn the conversation's
//! alarm queues at the SLA, the conversation's WebSocket (`GET
//! /api/assistant/conversations/:id/ws`), prompt sheets and telemetry. The rules are the
//! core's (`stepwise_core::handshake`, `conversation`); this folder loads and stores.

pub mod literature;
pub mod relay;
pub mod sheets;
pub mod sources;
pub mod stats;

use serde::Deserialize;
use serde_json::json;
use stepwise_core::conversation::{Command, Reply, SlotSupply};
use stepwise_core::handshake::{
    self, ContextRequest, MAX_SUPPLY_CHARS, RequestStatus, Supplier, Supply,
};
use stepwise_core::owner::OwnerKind;
use worker::{Env, Request, Response};

use crate::assistant;
use crate::conversations::client;
use crate::platform::body::read_json;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::output::Output;
use crate::platform::owner::Owner;
use crate::platform::url_parts::query_param;
use crate::streams;

/// Most payloads in one supply.
const MAX_PAYLOADS: usize = 8;

/// `GET /api/assistant/artifacts?stream_id=&research_id=`: what the caller owns there, by
/// phase, with sizes (404 for a stream or job that is not the caller's).
pub async fn artifacts(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let url = req.inner().url();
    let stream_id = query_param(&url, "stream_id").filter(|v| !v.is_empty());
    let research_id = query_param(&url, "research_id").filter(|v| !v.is_empty());
    if stream_id.is_none() && research_id.is_none() {
        return Err(AppError::invalid_request(
            "name a `stream_id`, a `research_id`, or both",
        ));
    }
    let stream = match &stream_id {
        Some(id) => Some(streams::find(&Kv::new(env)?, owner, id).await?),
        None => None,
    };
    let loaded = sources::load(env, owner, stream, research_id.as_deref(), true).await?;
    let sources = loaded.sources();
    let jobs: Vec<&str> = loaded.jobs.iter().map(|j| j.id.as_str()).collect();
    let listed: Vec<_> = handshake::list(&sources)
        .into_iter()
        .filter(|a| {
            !a.key_path.starts_with("research/")
                || research_id.is_none()
                || jobs
                    .first()
                    .is_some_and(|j| a.key_path.starts_with(&format!("research/{j}/")))
        })
        .collect();
    Ok(Response::from_json(&json!({"artifacts": listed}))?)
}

/// One payload of a supply: a slot and either an artifact's key path or typed text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    slot: String,
    #[serde(default)]
    key_path: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

/// The body of `POST /api/assistant/context-supply`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SupplyBody {
    conversation_id: String,
    request_id: String,
    #[serde(default)]
    payloads: Vec<Payload>,
    #[serde(default)]
    skip: Vec<String>,
}

/// `POST /api/assistant/context-supply`: supplies (and skips) slots of the waiting request,
/// all or nothing; once its required slots are met, the deferred turn runs and its answer is
/// returned (`status: "answered"`), else `status: "waiting_context"` with the request.
pub async fn supply(mut req: Request, env: Env, owner: &Owner) -> AppResult<Response> {
    let body: SupplyBody = read_json(&mut req).await?;
    if body.payloads.is_empty() && body.skip.is_empty() {
        return Err(AppError::invalid_request(
            "send `payloads`, `skip`, or both",
        ));
    }
    if body.payloads.len() + body.skip.len() > MAX_PAYLOADS {
        return Err(AppError::invalid_request(format!(
            "at most {MAX_PAYLOADS} payloads and skips together"
        )));
    }
    let request = waiting(&env, owner, &body.conversation_id, &body.request_id).await?;
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
                let excerpt = slice_owned(&env, owner, path, slot.size_limit).await?;
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
    let command = Command::Supply {
        request_id: body.request_id.clone(),
        supplies,
        skips: body.skip.clone(),
    };
    let Reply::Conversation(record) =
        client::send(&env, &body.conversation_id, &owner.id, &command).await?
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
    answer(&env, owner, &body.conversation_id, &body.request_id, None).await
}

/// `POST /api/assistant/conversations/:id/requests/:rid/force`: "Run without context".
pub async fn force(env: Env, owner: &Owner, id: &str, request_id: &str) -> AppResult<Response> {
    let command = Command::Force {
        request_id: request_id.to_owned(),
    };
    client::send(&env, id, &owner.id, &command).await?;
    let warning = "Answered without the context asked for: you chose to run without it.";
    answer(&env, owner, id, request_id, Some(warning)).await
}

/// The fallback turn queued by the conversation's alarm at the SLA (`context_fallback`).
pub async fn fallback(env: &Env, message: &serde_json::Value) -> AppResult<()> {
    let text = |key: &str| message[key].as_str().unwrap_or("").to_owned();
    let owner = Owner {
        id: text("owner"),
        kind: OwnerKind::Anonymous,
        email: None,
    };
    let warning = "Answered without the context asked for: it was not supplied in time.";
    let mut out = Output::json();
    match assistant::resume(
        env.clone(),
        &owner,
        &text("conversation_id"),
        &text("request_id"),
        Some(warning),
        &mut out,
    )
    .await
    {
        Ok(_) => Ok(()),
        // Already answered (a supply or a force won the race), or deleted: nothing to do.
        Err(error)
            if matches!(
                error.code(),
                "context_request_not_found" | "conversation_not_found" | "turn_in_progress"
            ) =>
        {
            Ok(())
        }
        Err(error) => Err(error),
    }
}

/// Runs the deferred turn and answers `{status: "answered", request, answer}`.
async fn answer(
    env: &Env,
    owner: &Owner,
    id: &str,
    request_id: &str,
    warning: Option<&str>,
) -> AppResult<Response> {
    let mut out = Output::json();
    let (request, stored) =
        assistant::resume(env.clone(), owner, id, request_id, warning, &mut out).await?;
    let answer = out.answer().cloned();
    match answer {
        Some(answer) => {
            let mut response = Response::from_json(&json!({"status": "answered",
                "request": request, "answer": answer}))?;
            response.headers_mut().set(
                "x-stepwise-persisted",
                if stored { "true" } else { "false" },
            )?;
            Ok(response)
        }
        None => out.into_json_response(stored),
    }
}

/// The waiting request `request_id` of the caller's conversation `id`.
async fn waiting(
    env: &Env,
    owner: &Owner,
    id: &str,
    request_id: &str,
) -> AppResult<ContextRequest> {
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
    record
        .requests
        .into_iter()
        .find(|r| r.request_id == request_id && waiting && r.status == RequestStatus::Open)
        .ok_or_else(|| stepwise_core::conversation::ConversationError::NoSuchRequest.into())
}

/// Slices an artifact the caller owns (404 otherwise).
async fn slice_owned(
    env: &Env,
    owner: &Owner,
    key_path: &str,
    limit: usize,
) -> AppResult<handshake::Excerpt> {
    handshake::kind_of(key_path)
        .ok_or_else(|| handshake::ArtifactError::InvalidKeyPath(key_path.to_owned()))?;
    let parts: Vec<&str> = key_path.split('/').collect();
    let (stream, research) = match parts.as_slice() {
        ["stream", id, ..] if ids::is_id(id) => {
            (Some(streams::find(&Kv::new(env)?, owner, id).await?), None)
        }
        ["research", id, ..] if ids::is_id(id) => (None, Some(*id)),
        _ => return Err(handshake::ArtifactError::NotFound(key_path.to_owned()).into()),
    };
    let loaded = sources::load(env, owner, stream, research, true).await?;
    Ok(handshake::slice(&loaded.sources(), key_path, limit)?)
}

/// `GET /api/assistant/conversations/:id/ws`: the owner's browser watches the conversation.
pub async fn watch(req: Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let upgrade = req.headers().get("upgrade")?.unwrap_or_default();
    if !upgrade.eq_ignore_ascii_case("websocket") {
        return Err(AppError::invalid_request(
            "this route speaks WebSocket (`Upgrade: websocket`)",
        ));
    }
    if !ids::is_id(id) {
        return Err(AppError::conversation_not_found());
    }
    let headers = worker::Headers::new();
    headers.set(client::OWNER_HEADER, &owner.id)?;
    headers.set("upgrade", "websocket")?;
    let mut init = worker::RequestInit::new();
    init.with_headers(headers);
    let inner = Request::new_with_init(&format!("https://{}.internal/ws", client::BINDING), &init)?;
    crate::platform::objects::fetch(env, client::BINDING, id, inner).await
}

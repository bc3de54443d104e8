//! Context on request at the edge (context-handshake.md), below the assistant: the owner's
//! artifacts (`GET /api/assistant/artifacts`) and their slices, the conversation's WebSocket
//! (`GET /api/assistant/conversations/:id/ws`), a turn's sources, prompt sheets, telemetry and
//! the relay of an answer's deltas. The routes that run a deferred turn (supply, force, the
//! fallback) are the assistant's (`assistant/deferred.rs`). The rules are the core's
//! (`stepwise_core::handshake`, `conversation`); this folder loads and stores.

pub mod literature;
pub mod relay;
pub mod sheets;
pub mod sources;
pub mod stats;

use serde_json::json;
use stepwise_core::conversation::ConversationKind;
use stepwise_core::handshake;
use worker::{Env, Request, Response};

use crate::assistant::host::{KIND_HEADER, kind_name};
use crate::chat::conversation::TOKEN_HEADER;
use crate::conversations::client;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::platform::url_parts::query_param;
use crate::streams;

/// `GET /api/assistant/artifacts?stream_id=&research_id=`: what the caller owns there, by
/// phase, with sizes (404 for a stream or job that is not the caller's). With `?key_path=`
/// (and `limit`, at most `MAX_SLICE_CHARS`), one artifact's text instead: its excerpt from the
/// top, redacted as the model would read it.
pub async fn artifacts(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let url = req.inner().url();
    if let Some(key_path) = query_param(&url, "key_path") {
        let limit = match query_param(&url, "limit") {
            None => handshake::artifacts::DEFAULT_SLICE_CHARS,
            Some(text) => text
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=handshake::artifacts::MAX_SLICE_CHARS).contains(n))
                .ok_or_else(|| {
                    AppError::invalid_request(format!(
                        "`limit` is a count of characters from 1 to {}",
                        handshake::artifacts::MAX_SLICE_CHARS
                    ))
                })?,
        };
        let excerpt = slice_owned(env, owner, &key_path, limit).await?;
        return Ok(Response::from_json(&excerpt)?);
    }
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

/// Slices an artifact the caller owns (404 otherwise).
pub async fn slice_owned(
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

/// `GET /api/assistant/conversations/:id/ws` and `GET /api/conversations/:id/ws` (a guided
/// conversation, whose token a browser names as the subprotocol `token.<token>`, since it cannot
/// set headers; other clients may send `x-conversation-token`): the owner's browser watches the
/// conversation. The other kind's route finds nothing (404).
pub async fn watch(
    req: Request,
    env: &Env,
    owner: &Owner,
    id: &str,
    kind: ConversationKind,
) -> AppResult<Response> {
    crate::platform::upgrade::admit(&req, env)?;
    if !ids::is_id(id) {
        return Err(AppError::conversation_not_found());
    }
    let headers = worker::Headers::new();
    headers.set(client::OWNER_HEADER, &owner.id)?;
    headers.set("upgrade", "websocket")?;
    headers.set(KIND_HEADER, kind_name(kind))?;
    if kind == ConversationKind::Guided {
        let protocols = req
            .headers()
            .get("sec-websocket-protocol")?
            .unwrap_or_default();
        let token = req.headers().get(TOKEN_HEADER)?.or_else(|| {
            protocols
                .split(',')
                .find_map(|p| p.trim().strip_prefix("token."))
                .map(str::to_owned)
        });
        if let Some(token) = token {
            headers.set(TOKEN_HEADER, &token)?;
        }
    }
    let mut init = worker::RequestInit::new();
    init.with_headers(headers);
    let inner = Request::new_with_init(&format!("https://{}.internal/ws", client::BINDING), &init)?;
    crate::platform::objects::fetch(env, client::BINDING, id, inner).await
}

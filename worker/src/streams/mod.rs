//! Saved streams at the edge: `POST /api/streams` saves a confirmed guided conversation as a
//! stream, `GET /api/streams` lists the owner's, `GET`/`PUT`/`DELETE /api/streams/:id` read,
//! change (name, `chat_instructions`, field edits validated by the core) and delete one. Another
//! owner's stream is not found, exactly like a missing one.

pub mod store;

use serde::Deserialize;
use stepwise_core::conversation::ConversationKind;
use stepwise_core::streams::{SavedStream, StreamChange};
use stepwise_core::workflow::WorkflowState;
use worker::{Env, Request, Response};

use crate::chat::conversation::{self, TOKEN_HEADER};
use crate::platform::body::read_json;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::workflows::store as workflows;

/// Most streams an owner may keep.
pub const MAX_STREAMS_PER_OWNER: u64 = 100;

/// The body of `POST /api/streams`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveBody {
    conversation_id: String,
}

/// `POST /api/streams` `{conversation_id}` with the conversation's token: saves its confirmed
/// configuration (409 `not_confirmed` before the review was confirmed).
pub async fn create(mut req: Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let token = req.headers().get(TOKEN_HEADER)?;
    let SaveBody { conversation_id } = read_json(&mut req).await?;
    let record = conversation::read(env, owner, &conversation_id, token).await?;
    let state = match (record.kind, record.guided) {
        (ConversationKind::Guided, Some(state)) => state,
        _ => return Err(AppError::conversation_not_found()),
    };
    let kv = Kv::new(env)?;
    let spec = workflows::load(&kv, &state.workflow).await?;
    let workflow_state = WorkflowState {
        current_step: state.current_step,
        config: state.current_config,
        skipped: state.skipped,
    };
    if store::LIST
        .page(&kv, &owner.id, MAX_STREAMS_PER_OWNER, None)
        .await?
        .items
        .len() as u64
        >= MAX_STREAMS_PER_OWNER
    {
        return Err(AppError::limit_reached(&format!(
            "an owner keeps at most {MAX_STREAMS_PER_OWNER} streams; delete one first"
        )));
    }
    let stream = SavedStream::from_state(
        &spec,
        &workflow_state,
        &ids::random_id()?,
        &owner.id,
        Some(&conversation_id),
        now_ms(),
    )?;
    store::save(&kv, &stream, store::retention_seconds(env)).await?;
    Ok(Response::from_json(&stream.view())?.with_status(201))
}

/// `GET /api/streams`: the owner's streams, newest first (`limit`, `cursor`).
pub async fn list(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    store::LIST.respond(req, env, &owner.id).await
}

/// `GET /api/streams/:id`.
pub async fn get(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let stream = find(&Kv::new(env)?, owner, id).await?;
    Ok(Response::from_json(&stream.view())?)
}

/// `PUT /api/streams/:id` with a [`StreamChange`]: all of it applies, or none (422).
pub async fn change(mut req: Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let change: StreamChange = read_json(&mut req).await?;
    let kv = Kv::new(env)?;
    let stream = find(&kv, owner, id).await?;
    let spec = workflows::load(&kv, &stream.workflow).await?;
    let changed = stream.apply(&spec, &change, now_ms())?;
    store::save(&kv, &changed, store::retention_seconds(env)).await?;
    Ok(Response::from_json(&changed.view())?)
}

/// `DELETE /api/streams/:id`: 204.
pub async fn delete(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let kv = Kv::new(env)?;
    let stream = find(&kv, owner, id).await?;
    store::delete(&kv, &stream).await?;
    Ok(Response::empty()?.with_status(204))
}

/// The owner's stream `id`, or 404 `not_found`.
pub async fn find(kv: &Kv, owner: &Owner, id: &str) -> AppResult<SavedStream> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("stream"));
    }
    store::load(kv, &owner.id, id)
        .await?
        .filter(|s| s.owner == owner.id)
        .ok_or_else(|| AppError::not_found("stream"))
}

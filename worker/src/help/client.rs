//! Talking to a help session's Durable Object (one per session id, named by the id): an
//! [`Envelope`] of a caller and a command goes in as JSON, the core's [`HelpReply`] comes back;
//! a refusal comes back as the usual error answer and is turned into the same [`AppError`].
//! A turn ([`TurnOrder`], `POST /turn`), a join, a Stop and a tab's WebSocket ([`ask`]) are
//! requests of their own.

use serde::{Deserialize, Serialize};
use stepwise_core::help::{Caller, HelpCommand, HelpError, HelpReply};
use worker::{Env, Method, Request, RequestInit, Response};

use crate::platform::error::AppResult;
use crate::platform::owner::Owner;
use crate::platform::{ids, objects};

/// The Durable Object binding's name in wrangler.toml.
pub const BINDING: &str = "HELP_DESK";
/// The header naming the session.
pub const ID_HEADER: &str = "x-stepwise-session";

/// The header naming the owner of a join or a Stop.
pub const OWNER_HEADER: &str = "x-stepwise-owner";

/// A turn for the session's object to run (`POST /turn`).
#[derive(Serialize, Deserialize)]
pub struct TurnOrder {
    /// Who asks (their spending guard and network are charged).
    pub owner: Owner,
    /// The question.
    pub message: String,
    /// The session is new: created by this turn.
    pub create: bool,
    /// Answered as an event stream (else as JSON once the turn ends).
    pub streamed: bool,
}

/// A command and who sends it.
#[derive(Serialize, Deserialize)]
pub struct Envelope {
    /// The owner or an operator.
    pub caller: Caller,
    /// What to do.
    pub command: HelpCommand,
}

/// Sends `command` of `caller` to session `id`; 404 `help_session_not_found` for a string that
/// is not a session id.
pub async fn send(
    env: &Env,
    id: &str,
    caller: Caller,
    command: HelpCommand,
) -> AppResult<HelpReply> {
    if !ids::is_id(id) {
        return Err(stepwise_core::help::HelpError::NotFound.into());
    }
    let body = serde_json::to_string(&Envelope { caller, command })?;
    let text = objects::command(env, BINDING, id, &[(ID_HEADER, id)], body).await?;
    Ok(serde_json::from_str(&text)?)
}

/// A join, a Stop or a WebSocket (`ws`) of `owner` on session `id`'s object (`path`): its answer as it is, errors
/// included (404 for a string that is not a session id).
pub async fn ask(
    env: &Env,
    owner: &Owner,
    id: &str,
    path: &str,
    method: Method,
) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(HelpError::NotFound.into());
    }
    let mut init = RequestInit::new();
    init.with_method(method);
    let request = Request::new_with_init(&format!("https://{BINDING}.internal/{path}"), &init)?;
    request.headers().set(ID_HEADER, id)?;
    request.headers().set(OWNER_HEADER, &owner.id)?;
    if path == "ws" {
        request.headers().set("upgrade", "websocket")?;
    }
    objects::fetch(env, BINDING, id, request).await
}

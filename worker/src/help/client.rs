//! Talking to a help session's Durable Object (one per session id, named by the id): an
//! [`Envelope`] of a caller and a command goes in as JSON, the core's [`HelpReply`] comes back;
//! a refusal comes back as the usual error answer and is turned into the same [`AppError`].

use serde::{Deserialize, Serialize};
use stepwise_core::help::{Caller, HelpCommand, HelpReply};
use worker::{Env, Headers, Method, Request, RequestInit};

use crate::platform::error::{AppError, AppResult};
use crate::platform::{ids, objects};

/// The Durable Object binding's name in wrangler.toml.
pub const BINDING: &str = "HELP_DESK";
/// The header naming the session.
pub const ID_HEADER: &str = "x-stepwise-session";

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
    let headers = Headers::new();
    headers.set(ID_HEADER, id)?;
    headers.set("content-type", "application/json")?;
    let body = serde_json::to_string(&Envelope { caller, command })?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body.into()));
    let request = Request::new_with_init("https://help.internal/", &init)?;
    let mut response = objects::fetch(env, BINDING, id, request).await?;
    let status = response.status_code();
    let text = response.text().await?;
    if status == 200 {
        return Ok(serde_json::from_str(&text)?);
    }
    Err(AppError::relayed(status, &text))
}

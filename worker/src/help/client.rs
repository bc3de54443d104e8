//! Talking to a help session's Durable Object (one per session id, named by the id): an
//! [`Envelope`] of a caller and a command goes in as JSON, the core's [`HelpReply`] comes back;
//! a refusal comes back as the usual error answer and is turned into the same [`AppError`].

use serde::{Deserialize, Serialize};
use stepwise_core::help::{Caller, HelpCommand, HelpReply};
use worker::Env;

use crate::platform::error::AppResult;
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
    let body = serde_json::to_string(&Envelope { caller, command })?;
    let text = objects::command(env, BINDING, id, &[(ID_HEADER, id)], body).await?;
    Ok(serde_json::from_str(&text)?)
}

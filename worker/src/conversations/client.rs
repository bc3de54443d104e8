//! Talking to a conversation's Durable Object (one per conversation id, named by the id): a
//! [`Command`] of an owner goes in as JSON (headers `x-stepwise-owner`, `x-stepwise-conversation`)
//! and its [`Reply`] comes back; a refusal comes back as the usual error answer and is turned
//! into the same [`AppError`] here. Also how long a conversation is kept.

use stepwise_core::conversation::{Command, Reply};
use worker::Env;

use crate::platform::error::{AppError, AppResult};
use crate::platform::settings::number;
use crate::platform::{ids, objects};

/// The Durable Object binding's name in wrangler.toml.
pub const BINDING: &str = "CONVERSATIONS";
/// The header naming the owner who asks.
pub const OWNER_HEADER: &str = "x-stepwise-owner";
/// The header naming the conversation.
pub const ID_HEADER: &str = "x-stepwise-conversation";

/// Sends `command` of `owner` to conversation `id`; 404 `conversation_not_found` for a string
/// that is not a conversation id.
pub async fn send(env: &Env, id: &str, owner: &str, command: &Command) -> AppResult<Reply> {
    if !ids::is_id(id) {
        return Err(AppError::conversation_not_found());
    }
    let headers = [(OWNER_HEADER, owner), (ID_HEADER, id)];
    let text =
        objects::command(env, BINDING, id, &headers, serde_json::to_string(command)?).await?;
    Ok(serde_json::from_str(&text)?)
}

/// Days a conversation is kept after its last turn (`CONVERSATION_RETENTION_DAYS`).
pub const DEFAULT_RETENTION_DAYS: u64 = 90;
const DAY_MS: u64 = 24 * 3600 * 1000;

/// How long a conversation is kept after its last turn.
pub fn retention_ms(env: &Env) -> u64 {
    number::<u64>(env, "CONVERSATION_RETENTION_DAYS")
        .unwrap_or(DEFAULT_RETENTION_DAYS)
        .saturating_mul(DAY_MS)
}

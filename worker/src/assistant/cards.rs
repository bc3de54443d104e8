//! `POST /api/assistant/conversations/:id/cards`: what the owner did with a payload card of an
//! answer (`accepted`, `dismissed`, `failed` with a note), kept with the conversation by the
//! core (`Command::SetCard`) and sent to every watching tab as `conversation:card`.

use serde::Deserialize;
use serde_json::json;
use stepwise_core::conversation::{CardOutcome, Command, Reply};
use worker::{Env, Request, Response};

use crate::conversations::client;
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;

/// The request's body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CardBody {
    message: usize,
    payload: usize,
    outcome: CardOutcome,
    #[serde(default)]
    note: Option<String>,
}

/// Sets a card's outcome: 200 with `{message, payload, state}`; 404 `card_not_found` when the
/// conversation has no such card, 409 `card_settled` when it was accepted already.
pub async fn set(mut req: Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let body: CardBody = read_json(&mut req).await?;
    let command = Command::SetCard {
        message: body.message,
        payload: body.payload,
        outcome: body.outcome,
        note: body.note,
    };
    let Reply::Conversation(conversation) = client::send(env, id, &owner.id, &command).await?
    else {
        return Err(AppError::internal(
            &"the conversation answered a card with no record",
        ));
    };
    let state = conversation
        .entries
        .get(body.message)
        .and_then(|e| e.cards.get(&u32::try_from(body.payload).ok()?));
    Ok(Response::from_json(&json!({
        "message": body.message,
        "payload": body.payload,
        "state": state,
    }))?)
}

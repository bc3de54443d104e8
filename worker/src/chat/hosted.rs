//! Guided chat turns hosted by their conversation's Durable Object, as assistant turns are
//! (`crate::assistant::host`): the edge sends the turn (`POST /turn`, [`Ordered::Guided`]), the
//! object begins it ([`super::prepare`]) and, when it is streamed, runs it in the background with
//! a log every client reads (`crate::platform::live`), so the answer goes on when the tab goes
//! away, a reload joins it with `Last-Event-ID`, and Stop keeps what was generated. The log's
//! header holds the state the turn keeps if the object dies mid-turn
//! (`GuidedState::before_answer`). A first turn stores nothing before it answers (no lease, no
//! header): the host remembers its owner and token's hash for those who join or stop it, and if
//! the object dies it leaves no conversation. A JSON turn is awaited and answered whole.
//!
//! Guided turns are not queued: a message sent while one runs is refused (409
//! `turn_in_progress`), since the next turn builds on the count of turns the first one makes.

use stepwise_core::conversation::Entry;
use worker::{Env, Response, State};

use super::conversation::TOKEN_HEADER;
use super::{Prepared, prepare, refund};
use crate::assistant::host::{Host, Ordered, TurnOrder, begin_log};
use crate::conversations::client::ID_HEADER;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::output::Output;

/// Begins the ordered guided turn and runs it: streamed, in the background, the answer being its
/// log's stream (with the conversation's id, and a new conversation's token, in its headers);
/// else awaited and answered as JSON.
pub async fn run(host: &Host, state: &State, env: &Env, order: TurnOrder) -> AppResult<Response> {
    let running = host.hold();
    let TurnOrder {
        owner,
        conversation_id: id,
        start,
        what,
        delivery,
    } = order;
    let Ordered::Guided(guided) = what else {
        return Err(AppError::internal(&"not a guided turn"));
    };
    let token = guided.token.clone();
    let delivery = delivery.into_delivery()?;
    let Prepared {
        turn,
        start: plan,
        wire,
        charge,
    } = prepare(*guided, &id, start, delivery, env.clone(), &owner).await?;
    let Some(wire) = wire else {
        let mut out = Output::json();
        let persisted = turn.run(plan, &mut out).await;
        return out.into_json_response(persisted);
    };
    // A first turn holds no lease (its conversation is created when it commits): its events are
    // numbered from 0, below every later turn's, and if the object dies it leaves nothing.
    let lease = turn.conversation.lease.unwrap_or(0);
    let kept = match turn.conversation.is_new() {
        true => None,
        false => turn.kept_if_cut_short(&plan),
    };
    let guest = turn
        .conversation
        .is_new()
        .then(|| (owner.id.clone(), turn.conversation.token_hash.clone()));
    let token = start.then_some(token);
    let shown = Entry::user(&turn.request.message, now_ms(), None);
    let opened = match begin_log(state, &id, lease, None, kept, Some(shown)).await {
        Ok(log) => named(log.subscribe(0, wire), &id, token.as_ref()).map(|r| (log, r)),
        Err(error) => Err(error),
    };
    let (log, response) = match opened {
        Ok(opened) => opened,
        Err(error) => {
            // Nothing ran: the lease and the charge are given back.
            turn.conversation.abort(env).await;
            refund(env, &owner, charge).await;
            return Err(error);
        }
    };
    if turn.conversation.is_new() {
        // Nothing would read or erase its stored batches if the object died.
        log.keep_in_memory();
    }
    host.show(log.clone(), guest);
    state.wait_until(async move {
        let _running = running;
        let mut out = Output::Live(log.clone());
        turn.run(plan, &mut out).await;
        log.finish().await;
    });
    Ok(response)
}

/// `response` with the conversation's id, and a new conversation's `token`, in its headers.
fn named(response: AppResult<Response>, id: &str, token: Option<&String>) -> AppResult<Response> {
    let mut response = response?;
    response.headers_mut().set(ID_HEADER, id)?;
    if let Some(token) = token {
        response.headers_mut().set(TOKEN_HEADER, token)?;
    }
    Ok(response)
}

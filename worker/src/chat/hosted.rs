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
//! A streamed message sent while a streamed turn runs waits for it (`GUIDED_QUEUE`, default on;
//! at most four): its stream says it is queued at once, and its turn begins when the
//! ones before it end, building on what they stored (its `turns` is checked when it is queued,
//! against the count the running turn began on). JSON and AG-UI messages, and any with the
//! setting off, are refused meanwhile (409 `turn_in_progress`), as before.

use std::rc::Rc;

use stepwise_core::conversation::{ConversationError, Entry};
use stepwise_core::turn::TurnStart;
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::worker_sys::DurableObjectState;
use worker::{Env, Response, State};

use super::conversation::{self, TOKEN_HEADER, hash_token};
use super::{Prepared, Turn, prepare, refund};
use crate::assistant::host::{
    GuidedOrder, GuidedWaiting, Host, Ordered, Running, TurnOrder, guided_queues, not_begun,
    stopped_waiting, waiting_stream,
};
use crate::assistant::log_header::begin_log;
use crate::conversations::client::ID_HEADER;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::live::TurnLog;
use crate::platform::negotiate::{Delivery, Wire};
use crate::platform::output::Output;
use crate::platform::owner::Owner;

/// Begins the ordered guided turn and runs it: streamed, in the background, the answer being its
/// log's stream (with the conversation's id, and a new conversation's token, in its headers);
/// else awaited and answered as JSON. `behind_first`: the object admitted it as the next message
/// of a new conversation whose first turn runs here (its owner, its token).
pub async fn run(
    host: &Host,
    state: &State,
    env: &Env,
    order: TurnOrder,
    behind_first: bool,
) -> AppResult<Response> {
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
    let mut guided = guided;
    let token = guided.token.clone();
    let mut delivery = delivery.into_delivery()?;
    let mut waited = false;
    if host.streaming().get() {
        // A turn streams, or waiting ones are worked through: a streamed message waits (if
        // messages may), anything else is refused now, before it could take the lease between
        // two waiting turns.
        let wire = match delivery {
            Delivery::Stream(wire) if !start && guided_queues(env) => wire,
            _ => return Err(ConversationError::TurnInProgress.into()),
        };
        checked_to_wait(env, &id, &owner, &guided, behind_first).await?;
        // Still streaming after that wait: it waits (with no wait between this check and the
        // queue). Otherwise the turns ended meanwhile, and it runs now on what they stored.
        if host.streaming().get() {
            let response = enqueue(host, &id, owner, guided, wire)?;
            host.announce_waiting(state, &id);
            return Ok(response);
        }
        waited = true;
        delivery = Delivery::Stream(wire);
    }
    let streamed = !matches!(delivery, Delivery::Json);
    // Set before the first wait: a message arriving while this turn begins waits for it, and
    // this call owns the background task that works through them.
    if streamed {
        host.streaming().set(true);
    }
    let prepared = async {
        if waited {
            // It builds on the turns it waited for, as a queued message does.
            let stored = conversation::read(env, &owner, &id, Some(token.clone())).await?;
            guided.request.turns = Some(stored.turns);
        }
        prepare(*guided, &id, start, delivery, env.clone(), &owner).await
    }
    .await;
    let Prepared {
        turn,
        start: plan,
        wire,
        charge,
    } = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            if streamed {
                work_through_waiting(host, state, env, &id, running, None);
            }
            return Err(error);
        }
    };
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
    let opened = match begin_log(state, &id, lease, None, kept, (Some(shown), None)).await {
        Ok(log) => named(log.subscribe(0, wire), &id, token.as_ref()).map(|r| (log, r)),
        Err(error) => Err(error),
    };
    let (log, response) = match opened {
        Ok(opened) => opened,
        Err(error) => {
            // Nothing ran: the lease and the charge are given back.
            turn.conversation.abort(env).await;
            refund(env, &owner, charge).await;
            work_through_waiting(host, state, env, &id, running, None);
            return Err(error);
        }
    };
    if turn.conversation.is_new() {
        // Nothing would read or erase its stored batches if the object died.
        log.keep_in_memory();
    }
    host.show(log.clone(), guest);
    work_through_waiting(host, state, env, &id, running, Some((turn, plan, log)));
    Ok(response)
}

/// A guided turn begun, with its plan and its log.
type Begun = (Turn, TurnStart, Rc<TurnLog>);

/// Runs `first` (when given), then the waiting messages' turns one after the other, in the
/// background; the host streams no more when none waits.
fn work_through_waiting(
    host: &Host,
    state: &State,
    env: &Env,
    id: &str,
    running: Running,
    first: Option<Begun>,
) {
    let (host, env, id) = (host.handle(), env.clone(), id.to_owned());
    // The state's JS handle, owned, for the turns begun after this one.
    let owned = State::from(JsValue::from(state.as_raw()).unchecked_into::<DurableObjectState>());
    state.wait_until(async move {
        let _running = running;
        let mut next = match first {
            Some(first) => Some(first),
            None => begin_waiting(&host, &owned, &env, &id).await,
        };
        while let Some((turn, plan, log)) = next.take() {
            let mut out = Output::Live(log.clone());
            turn.run(plan, &mut out).await;
            log.finish().await;
            next = begin_waiting(&host, &owned, &env, &id).await;
        }
        // No wait between finding none waiting and this: nothing can be queued in between.
        host.streaming().set(false);
    });
}

/// What a message that would wait is checked for first: what it is refused for whatever the
/// conversation holds ([`super::checked_alone`]: its provider, workflow and length), its token
/// (403), and its `turns`, the count the running turn began on (409 `stale_turn` otherwise). A
/// new conversation's first turn, stored only when it ends, began on none: the next message its
/// owner sends with its token (`behind_first`, checked by the object) waits with `turns: 0`.
async fn checked_to_wait(
    env: &Env,
    id: &str,
    owner: &Owner,
    order: &GuidedOrder,
    behind_first: bool,
) -> AppResult<()> {
    super::checked_alone(env, &order.request).await?;
    let current = match conversation::read(env, owner, id, Some(order.token.clone())).await {
        Ok(stored) => stored.turns,
        Err(error) if behind_first && error.code() == "conversation_not_found" => 0,
        Err(error) => return Err(error),
    };
    let turns = order.request.turns.unwrap_or(u32::MAX);
    if turns != current {
        return Err(ConversationError::StaleTurn {
            stated: turns,
            current,
        }
        .into());
    }
    Ok(())
}

/// Queues a checked message behind the running turn: its stream says so at once, and carries
/// its turn when it begins. 409 `queue_full` past four waiting.
fn enqueue(
    host: &Host,
    id: &str,
    owner: Owner,
    order: Box<GuidedOrder>,
    mut wire: Wire,
) -> AppResult<Response> {
    let waiting = host.guided_waiting().borrow().len();
    let (response, sink, waiting_id) = waiting_stream(id, &mut wire, waiting)?;
    host.guided_waiting().borrow_mut().push_back(GuidedWaiting {
        id: waiting_id,
        owner,
        order,
        sink,
        wire,
    });
    Ok(response)
}

/// Begins the next waiting message's turn, if any, on what the turns before it stored: its
/// client's stream joins the new log. A message whose turn cannot begin gets the reason as an
/// `error` event, and the next is tried.
async fn begin_waiting(host: &Host, state: &State, env: &Env, id: &str) -> Option<Begun> {
    loop {
        let GuidedWaiting {
            id: waiting_id,
            owner,
            mut order,
            sink,
            mut wire,
        } = host.guided_waiting().borrow_mut().pop_front()?;
        host.announce_waiting(state, id);
        host.beginning(&waiting_id, true);
        let content = order.request.message.clone();
        let begun = async {
            // It begins the conversation when the first turn it waited behind kept nothing.
            let begins = match read_waited_for(host, env, &owner, id, &order).await? {
                Some(turns) => {
                    order.request.turns = Some(turns);
                    false
                }
                None => true,
            };
            let prepared = prepare(*order, id, begins, Delivery::Json, env.clone(), &owner).await?;
            let Prepared {
                turn,
                start,
                charge,
                ..
            } = prepared;
            if host.stop_asked() {
                // Stopped while it was being prepared: nothing of it runs or is kept.
                turn.conversation.abort(env).await;
                refund(env, &owner, charge).await;
                return Ok(None);
            }
            let kept = match turn.conversation.is_new() {
                true => None,
                false => turn.kept_if_cut_short(&start),
            };
            let shown = Entry::user(&turn.request.message, now_ms(), None);
            let lease = turn.conversation.lease.unwrap_or(0);
            let waited = Some(waiting_id.clone());
            match begin_log(state, id, lease, None, kept, (Some(shown), waited)).await {
                Ok(log) => {
                    if turn.conversation.is_new() {
                        // Nothing would read or erase its stored batches if the object died.
                        log.keep_in_memory();
                    }
                    Ok(Some((turn, start, log)))
                }
                Err(error) => {
                    turn.conversation.abort(env).await;
                    refund(env, &owner, charge).await;
                    Err(error)
                }
            }
        };
        let begun: AppResult<Option<Begun>> = begun.await;
        let stop_asked = host.begun();
        match begun {
            Ok(Some((turn, start, log))) => {
                log.attach(sink, wire, 0);
                let guest = turn
                    .conversation
                    .is_new()
                    .then(|| (owner.id.clone(), turn.conversation.token_hash.clone()));
                host.show_waited(log.clone(), waiting_id, guest);
                if stop_asked {
                    // Stopped while its log was being begun: the turn stops at its first wait.
                    log.stop();
                }
                return Some((turn, start, log));
            }
            // Stopped, and no turn of it began: its stream says so.
            Ok(None) => stopped_waiting(&sink, &mut wire),
            Err(_) if stop_asked => stopped_waiting(&sink, &mut wire),
            Err(error) => {
                not_begun(&sink, &mut wire, &error);
                host.announce_not_begun(state, id, (&waiting_id, &content), &error);
            }
        }
    }
}

/// The count of turns a waiting message's turn builds on: what the conversation stores now.
/// `None` when nothing is stored and the message waited behind the conversation's first turn
/// (its owner, its token): that turn failed, so nothing of it was kept, and this message begins
/// the conversation itself, under the id and token that turn was given.
async fn read_waited_for(
    host: &Host,
    env: &Env,
    owner: &Owner,
    id: &str,
    order: &GuidedOrder,
) -> AppResult<Option<u32>> {
    match conversation::read(env, owner, id, Some(order.token.clone())).await {
        Ok(stored) => Ok(Some(stored.turns)),
        Err(error)
            if error.code() == "conversation_not_found"
                && host.admits(&owner.id, &hash_token(&order.token).await?) =>
        {
            Ok(None)
        }
        Err(error) => Err(error),
    }
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

//! Assistant turns hosted by their conversation's Durable Object, so a turn runs to its end
//! whether or not anyone is connected: the edge sends a [`TurnOrder`] (`POST /turn`), the object
//! begins the turn and runs it in the background ([`Host::run`]) while the caller, and any
//! client that joins later ([`Host::join`], from its `Last-Event-ID`), reads the turn's log
//! (`crate::platform::live`). A Stop ([`Host::stop`]) aborts the model call; the turn keeps what
//! it generated, marked `stopped`. A deferred turn resumed (`Ordered::Resume`: a supply, a force,
//! the wait running out) has a log too, so every tab streams it and Stop stops it, even when its
//! request waits for one JSON answer (`Output::LiveJson`); other JSON turns are awaited whole.
//!
//! The object knows which turns it runs ([`Host::idle`]): a conversation whose record says a turn
//! runs while its object runs none lost that turn with an earlier instance of the object (a
//! deploy, an eviction, a crash); `super::log_header::interrupted_entries` is what it keeps of it.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

mod line;
mod queue;

use futures::channel::oneshot;
use serde::{Deserialize, Serialize};
use serde_json::json;
use stepwise_core::conversation::{ConversationEvent, ConversationKind};
use stepwise_core::interop::ui_message::UiMessageEncoder;
use stepwise_core::protocol::ChatRequest;
use stepwise_core::protocol::StreamEvent;
use worker::{Env, Method, Request, RequestInit, Response, State, web_sys};

use super::{Asked, prepare, prepare_resume};
use crate::chat::conversation::TOKEN_HEADER;
use crate::conversations::client::{BINDING, ID_HEADER, OWNER_HEADER};
use crate::platform::ended::Earlier;
use crate::platform::error::{AppError, AppResult};
use crate::platform::live::{self, TurnLog};
use crate::platform::negotiate::{DELTAS_HEADER, Delivery, FORMAT_HEADER, Wire};
use crate::platform::output::Output;
use crate::platform::owner::Owner;
use crate::platform::settings::var;
use crate::platform::sse::EventSink;
use crate::platform::stop::{WAITING_HEADER, Withdrawn, stop_path};
use crate::platform::url_parts::seen_event;
use crate::platform::{body, ids, objects};

/// A turn for a conversation's object to run.
#[derive(Serialize, Deserialize)]
pub struct TurnOrder {
    /// Whose turn it is.
    pub owner: Owner,
    /// The conversation.
    pub conversation_id: String,
    /// The conversation is new (its id was just made by the edge).
    pub start: bool,
    /// What to run.
    pub what: Ordered,
    /// How the caller reads the answer.
    pub delivery: DeliveryOrder,
}

/// What a turn runs.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ordered {
    /// A message or a server action.
    Ask(Box<Asked>),
    /// The deferred turn of a context request that is ready, forced or fallen back.
    Resume {
        /// The request.
        request_id: String,
        /// The line an answer given without what was asked for opens with.
        warning: Option<String>,
    },
    /// A guided chat turn (run by the chat module's `hosted.rs`).
    Guided(Box<GuidedOrder>),
}

/// A guided chat turn for a conversation's object to run.
#[derive(Serialize, Deserialize)]
pub struct GuidedOrder {
    /// The request as it came.
    pub request: ChatRequest,
    /// The conversation's token (made by the edge for a first turn).
    pub token: String,
}

/// How the caller reads a turn's answer: [`Delivery`] in a form that crosses to the object.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryOrder {
    /// One JSON answer when the turn ends.
    Json,
    /// Stepwise's events (`model_delta` ones when asked).
    Stepwise {
        /// Whether to send `model_delta` events.
        model_deltas: bool,
    },
    /// The AI SDK's UI message stream.
    UiMessage,
    /// AG-UI events of a run.
    AgUi {
        /// The client's thread id.
        thread_id: String,
        /// The client's run id.
        run_id: String,
    },
}

impl DeliveryOrder {
    /// The order form of `delivery`.
    pub fn of(delivery: Delivery) -> DeliveryOrder {
        match delivery {
            Delivery::Json => DeliveryOrder::Json,
            Delivery::Stream(Wire::Stepwise { model_deltas }) => {
                DeliveryOrder::Stepwise { model_deltas }
            }
            Delivery::Stream(Wire::UiMessage(_)) => DeliveryOrder::UiMessage,
            // A run's AG-UI encoder is made from its ids (`Delivery::AgUi`); `stream_wire` never
            // makes one, so an encoder handed over here has no ids to cross with.
            Delivery::Stream(Wire::AgUi(_)) => DeliveryOrder::Json,
            Delivery::AgUi { thread_id, run_id } => DeliveryOrder::AgUi { thread_id, run_id },
        }
    }

    /// The delivery the order names (a guided turn's AG-UI steps open once it is planned).
    pub fn into_delivery(self) -> AppResult<Delivery> {
        Ok(match self {
            DeliveryOrder::AgUi { thread_id, run_id } => Delivery::AgUi { thread_id, run_id },
            other => other.wire(false)?.map_or(Delivery::Json, Delivery::Stream),
        })
    }

    /// The dialect to stream in; `None` for one JSON answer. A turn that `continues` the
    /// client's last message (an approved call's run) opens no new UI message.
    pub fn wire(&self, continues: bool) -> AppResult<Option<Wire>> {
        match self {
            DeliveryOrder::Json => Ok(None),
            DeliveryOrder::Stepwise { model_deltas } => Ok(Some(Wire::Stepwise {
                model_deltas: *model_deltas,
            })),
            DeliveryOrder::UiMessage => {
                let id = match continues {
                    true => String::new(),
                    false => format!("msg-{}", ids::random_id()?),
                };
                Ok(Some(Wire::UiMessage(Box::new(UiMessageEncoder::new(id)))))
            }
            DeliveryOrder::AgUi { thread_id, run_id } => Delivery::AgUi {
                thread_id: thread_id.clone(),
                run_id: run_id.clone(),
            }
            .wire(None),
        }
    }
}

/// Sends `order` to its conversation's object and answers with what the object answers (the
/// turn's event stream, its JSON answer, or the error that refused it).
pub async fn send(env: &Env, order: &TurnOrder) -> AppResult<Response> {
    let body = serde_json::to_string(order)?;
    let (owner, id) = (&order.owner, order.conversation_id.as_str());
    call(env, owner, id, "turn", Method::Post, Some(body), &[]).await
}

/// `GET /api/assistant/conversations/:id/stream` and `GET /api/conversations/:id/stream` (a
/// guided conversation's, with its token): joins the conversation's running turn (or its last
/// one) after the event the client saw last (`Last-Event-ID`, or `?after=`): every later event
/// once, in order, then the live ones, in the dialect the headers ask for; 204 when there is no
/// turn to join.
pub async fn join(
    req: &Request,
    env: &Env,
    owner: &Owner,
    id: &str,
    kind: ConversationKind,
) -> AppResult<Response> {
    let after = seen_event(req)?;
    let forwarded = forwarded(req, &[FORMAT_HEADER, DELTAS_HEADER, TOKEN_HEADER], kind)?;
    let path = format!("join?after={after}");
    ask(env, owner, id, &path, Method::Get, &forwarded).await
}

/// `POST /api/assistant/conversations/:id/stop` and `POST /api/conversations/:id/stop` (with a
/// guided conversation's token): stops the running turn (the model call is aborted, what was
/// generated is kept marked `stopped`, every client gets `stopped`): `{"stopped": true}`, or
/// `false` when no turn runs. With `{"waiting": id}` (the id a waiting message's stream was
/// named by, [`WAITING_HEADER`]), it stops that message only: taken out of the line, its
/// stream ends with `stopped`; once its turn has begun, that turn is stopped. A `waiting` that
/// is not an id (or `null`): 422.
pub async fn stop(
    mut req: Request,
    env: &Env,
    owner: &Owner,
    id: &str,
    kind: ConversationKind,
) -> AppResult<Response> {
    let forwarded = forwarded(&req, &[TOKEN_HEADER], kind)?;
    let path = stop_path(&body::read_limited(&mut req).await?)?;
    ask(env, owner, id, &path, Method::Post, &forwarded).await
}

/// The header naming the kind of conversation a join or a Stop is for (its route's): the
/// guided routes never reach an assistant conversation, nor the assistant's a guided one.
pub const KIND_HEADER: &str = "x-stepwise-kind";

/// The name of `kind` in [`KIND_HEADER`].
pub fn kind_name(kind: ConversationKind) -> &'static str {
    match kind {
        ConversationKind::Guided => "guided",
        ConversationKind::Assistant => "assistant",
    }
}

/// The headers of `req` among `names` that it has, and the route's `kind` ([`KIND_HEADER`]).
fn forwarded<'a>(
    req: &Request,
    names: &[&'a str],
    kind: ConversationKind,
) -> AppResult<Vec<(&'a str, String)>> {
    let mut found = vec![(KIND_HEADER, kind_name(kind).to_owned())];
    for name in names {
        if let Some(value) = req.headers().get(name)? {
            found.push((*name, value));
        }
    }
    Ok(found)
}

/// Asks conversation `id`'s object, for `owner`, at `path` (`join?after=…`, `stop`), with
/// `headers`; its answer as is (404 for a string that is not a conversation id).
pub async fn ask(
    env: &Env,
    owner: &Owner,
    id: &str,
    path: &str,
    method: Method,
    headers: &[(&str, String)],
) -> AppResult<Response> {
    call(env, owner, id, path, method, None, headers).await
}

/// One request of `owner` to conversation `id`'s object (404 for a string that is not a
/// conversation id).
async fn call(
    env: &Env,
    owner: &Owner,
    id: &str,
    path: &str,
    method: Method,
    body: Option<String>,
    headers: &[(&str, String)],
) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::conversation_not_found());
    }
    let mut init = RequestInit::new();
    init.with_method(method).with_body(body.map(Into::into));
    let request = Request::new_with_init(&format!("https://{BINDING}.internal/{path}"), &init)?;
    request.headers().set(OWNER_HEADER, &owner.id)?;
    request.headers().set(ID_HEADER, id)?;
    for (name, value) in headers {
        request.headers().set(name, value)?;
    }
    objects::fetch(env, BINDING, id, request).await
}

/// The turns a conversation's object runs.
#[derive(Default)]
pub struct Host {
    /// Turns running in this instance (begun, not ended).
    running: Rc<Cell<u32>>,
    /// The log of the latest streamed turn (kept after it ends, for late joiners).
    log: Rc<RefCell<Option<Rc<TurnLog>>>>,
    /// The logs of the few turns before it, for a client that names one of them.
    earlier: Rc<Earlier<TurnLog>>,
    /// Messages sent while a streamed turn runs, answered after it in order.
    queue: Rc<RefCell<VecDeque<queue::Queued>>>,
    /// A streamed turn is being begun or runs, or queued ones are being worked through: set
    /// before the first wait, so a message arriving in any gap waits in the queue.
    streaming: Rc<Cell<bool>>,
    /// Who may join or stop the latest turn while its conversation is not stored yet (a guided
    /// first turn): the owner's id and the token's hash.
    guest: Rc<RefCell<Option<(String, String)>>>,
    /// Guided messages sent while a streamed turn runs (the guided chat's hosted turns), in
    /// order.
    guided: Rc<RefCell<VecDeque<GuidedWaiting>>>,
    /// The waiting message whose turn the latest log is (its id), for a Stop naming it.
    waited_as: Rc<RefCell<Option<String>>>,
    /// The waiting message taken out of the line whose turn is being begun.
    beginning: Rc<RefCell<Option<Beginning>>>,
    /// Resumed turns being begun or run, each until its sender is dropped: a waiting message
    /// whose turn could not begin because one of them took the lease waits for them.
    resumes: Rc<RefCell<Vec<oneshot::Receiver<()>>>>,
    /// The ids of the messages withdrawn last, oldest first (`host/line.rs`).
    withdrawn: Rc<Withdrawn>,
}

/// A waiting message whose turn is being begun, for a Stop that names it meanwhile.
struct Beginning {
    /// The id its stream was named by.
    waiting: String,
    /// Whether a Stop named it; `None` when it is not stopped (an approved call).
    stop: Option<bool>,
}

/// A guided message waiting for the running turn to end, with its client's stream.
pub struct GuidedWaiting {
    /// The id its stream was named by ([`WAITING_HEADER`]), for a Stop of it.
    pub id: String,
    /// Who sent it.
    pub owner: Owner,
    /// The message's turn.
    pub order: Box<GuidedOrder>,
    /// Its client's stream, and the dialect it reads.
    pub sink: EventSink,
    /// The dialect.
    pub wire: Wire,
}

/// Most messages that wait behind a running turn.
pub const MAX_QUEUED: usize = 4;

/// The stream of a message that waits behind the running turn, `waiting` others before it:
/// it says so at once, and carries the message's turn when it begins; it is named by a new id
/// in [`WAITING_HEADER`] (returned too), which a Stop of this message names. 409 `queue_full`
/// past [`MAX_QUEUED`].
pub fn waiting_stream(
    id: &str,
    wire: &mut Wire,
    waiting: usize,
) -> AppResult<(Response, EventSink, String)> {
    if waiting >= MAX_QUEUED {
        return Err(AppError::conflict(
            "queue_full",
            "this conversation already has as many messages waiting as it may; wait for an answer",
        ));
    }
    let (mut response, sink) = live::event_stream(wire)?;
    let waiting_id = ids::random_id()?;
    response.headers_mut().set(ID_HEADER, id)?;
    response.headers_mut().set(WAITING_HEADER, &waiting_id)?;
    let queued = StreamEvent::Status {
        message: "Queued: answered after the current answer...".into(),
    };
    live::note(&sink, wire, &queued);
    Ok((response, sink, waiting_id))
}

/// Takes the first entry of `line` for which `is` holds out of it.
fn take_where<T>(line: &RefCell<VecDeque<T>>, is: impl Fn(&T) -> bool) -> Option<T> {
    let mut line = line.borrow_mut();
    let at = line.iter().position(is)?;
    line.remove(at)
}

/// Ends the stream of a message stopped while it waited (nothing of it ran) with `stopped`.
pub fn stopped_waiting(sink: &EventSink, wire: &mut Wire) {
    let stopped = StreamEvent::Stopped {
        message: String::new(),
    };
    live::note(sink, wire, &stopped);
}

/// Ends a waiting message's stream with why its turn could not begin.
pub fn not_begun(sink: &EventSink, wire: &mut Wire, error: &AppError) {
    let failed = StreamEvent::Error {
        code: error.code().into(),
        message: error.message().into(),
    };
    live::note(sink, wire, &failed);
}

/// Counts a turn as running until dropped.
pub struct Running(Rc<Cell<u32>>);

impl Running {
    fn new(count: &Rc<Cell<u32>>) -> Running {
        count.set(count.get() + 1);
        Running(count.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

impl Host {
    /// Whether no turn runs in this instance.
    pub fn idle(&self) -> bool {
        self.running.get() == 0
    }

    /// Counts a turn as running in this instance until the value is dropped.
    pub fn hold(&self) -> Running {
        Running::new(&self.running)
    }

    /// The flag set while a streamed turn is being begun or runs, or waiting messages are being
    /// worked through (a message arriving meanwhile waits).
    pub fn streaming(&self) -> &Rc<Cell<bool>> {
        &self.streaming
    }

    /// The guided messages waiting behind the running turn.
    pub fn guided_waiting(&self) -> &Rc<RefCell<VecDeque<GuidedWaiting>>> {
        &self.guided
    }

    /// The parts of the host a background task shares (the same state, not a copy).
    pub fn handle(&self) -> Host {
        self.shared()
    }

    /// Makes `log` the one clients join and Stop stops (a guided turn's); `guest`: who may
    /// join or stop it before its conversation is stored (owner id, token hash).
    pub fn show(&self, log: Rc<TurnLog>, guest: Option<(String, String)>) {
        if let Some(before) = self.log.borrow_mut().replace(log) {
            self.earlier.keep(before);
        }
        *self.guest.borrow_mut() = guest;
        *self.waited_as.borrow_mut() = None;
    }

    /// [`Self::show`] for the turn of the message that waited as `waiting`.
    pub fn show_waited(&self, log: Rc<TurnLog>, waiting: String, guest: Option<(String, String)>) {
        self.show(log, guest);
        *self.waited_as.borrow_mut() = Some(waiting);
    }

    /// Forgets the latest turn's log and who may join it (the conversation was erased).
    pub fn forget(&self) {
        *self.log.borrow_mut() = None;
        self.earlier.clear();
        *self.guest.borrow_mut() = None;
    }

    /// Whether `owner` with the token hashed as `token_hash` may join or stop the latest turn
    /// of a conversation not stored yet.
    pub fn admits(&self, owner: &str, token_hash: &str) -> bool {
        self.guest
            .borrow()
            .as_ref()
            .is_some_and(|(o, t)| o == owner && t == token_hash)
    }

    /// Begins the ordered turn and runs it: streamed, it runs in the background and the answer
    /// is its log's stream; else it is awaited and answered as JSON.
    pub async fn run(&self, state: &State, env: &Env, order: TurnOrder) -> AppResult<Response> {
        let running = Running::new(&self.running);
        let TurnOrder {
            owner,
            conversation_id: id,
            start,
            what,
            delivery,
        } = order;
        let asked = match what {
            Ordered::Ask(asked) => asked,
            Ordered::Resume {
                request_id,
                warning,
            } => {
                let wire = delivery.wire(false)?;
                // Held until the resumed turn ends (or fails to begin), when waiting messages
                // are being worked through: it may take the lease between two of them, and the
                // next one then waits for it (`begin_queued`). When it leads, its own task works
                // through the waiting messages after it, and a streamed one drops this once it
                // has begun.
                let resuming = self.resuming();
                let (turn, request) =
                    prepare_resume(env.clone(), &owner, &id, &request_id, warning.as_deref())
                        .await?;
                // Logged as any turn: the other tabs stream it, a reload joins it, Stop stops
                // it, and a message sent meanwhile waits for it.
                let leads = !self.streaming.replace(true);
                let lease = turn.session.lease;
                let begun =
                    super::log_header::begin_log(state, &id, lease, None, None, (None, None)).await;
                let opened = begun.and_then(|log| match wire {
                    Some(wire) => {
                        let mut response = log.subscribe(0, wire)?;
                        response.headers_mut().set(ID_HEADER, &id)?;
                        Ok((log, Some(response)))
                    }
                    None => Ok((log, None)),
                });
                let (log, response) = match opened {
                    Ok(opened) => opened,
                    Err(error) => {
                        turn.session.abort(env).await;
                        if leads {
                            self.work_through_queue(state, env, &id, running, None);
                        }
                        return Err(error);
                    }
                };
                self.show(log.clone(), None);
                // Streamed (an AG-UI run resuming it): run in the background, as a turn is.
                if let Some(response) = response {
                    match leads {
                        true => {
                            self.work_through_queue(state, env, &id, running, Some((turn, log)))
                        }
                        false => state.wait_until(async move {
                            let (_running, _resuming) = (running, resuming);
                            turn.run(&mut Output::Live(log.clone())).await;
                            log.finish().await;
                        }),
                    }
                    return Ok(response);
                }
                // Awaited for its JSON answer, its events logged all the same.
                let mut out = Output::LiveJson(log.clone(), None);
                let stored = turn.run(&mut out).await;
                log.finish().await;
                drop(resuming);
                if leads {
                    self.work_through_queue(state, env, &id, running, None);
                }
                return answered(out, request, stored);
            }
            Ordered::Guided(_) => {
                return Err(AppError::internal(
                    &"a guided turn reached the assistant's host",
                ));
            }
        };
        let wire = delivery.wire(asked.continues())?;
        let wire = match wire {
            Some(wire) if self.streaming.get() && queues(env) => {
                // Refused now for what its turn would be refused for whatever it waits behind.
                asked.checked_alone(env, &owner).await?;
                // Still streaming after that wait: it waits (with no wait between this check
                // and the queue). Otherwise the turns ended meanwhile, and it runs now.
                if self.streaming.get() {
                    let response = self.enqueue(&id, owner, asked, wire)?;
                    self.announce_waiting(state, &id);
                    return Ok(response);
                }
                Some(wire)
            }
            wire => wire,
        };
        let Some(wire) = wire else {
            let turn = prepare(env.clone(), &owner, &id, start, *asked).await?;
            let mut out = Output::json();
            let stored = turn.run(&mut out).await;
            return out.into_json_response(stored);
        };
        self.streaming.set(true);
        let turn = match prepare(env.clone(), &owner, &id, start, *asked).await {
            Ok(turn) => turn,
            Err(error) => {
                self.work_through_queue(state, env, &id, running, None);
                return Err(error);
            }
        };
        let lease = turn.session.lease;
        let begun =
            super::log_header::begin_log(state, &id, lease, turn.user_entry(), None, (None, None))
                .await;
        let (log, response) = match begun.and_then(|log| {
            let mut response = log.subscribe(0, wire)?;
            response.headers_mut().set(ID_HEADER, &id)?;
            Ok((log, response))
        }) {
            Ok(begun) => begun,
            Err(error) => {
                turn.session.abort(env).await;
                self.work_through_queue(state, env, &id, running, None);
                return Err(error);
            }
        };
        self.show(log.clone(), None);
        self.work_through_queue(state, env, &id, running, Some((turn, log)));
        Ok(response)
    }

    /// The parts of the host a running turn's task shares.
    fn shared(&self) -> Host {
        Host {
            running: self.running.clone(),
            log: self.log.clone(),
            earlier: self.earlier.clone(),
            queue: self.queue.clone(),
            streaming: self.streaming.clone(),
            guest: self.guest.clone(),
            guided: self.guided.clone(),
            waited_as: self.waited_as.clone(),
            beginning: self.beginning.clone(),
            resumes: self.resumes.clone(),
            withdrawn: self.withdrawn.clone(),
        }
    }

    /// A client joins the latest streamed turn after event `after`: its stream, or `None` when
    /// this instance has no turn to join. An `after` of one of the few turns before it (a
    /// tab's own turn that ended while it was away, another having begun since) joins that one.
    pub fn join(&self, after: u64, wire: Wire) -> AppResult<Option<Response>> {
        if let Some(earlier) = self.earlier.find(|log| log.within(after).is_some()) {
            return Ok(Some(earlier.subscribe(after, wire)?));
        }
        let log = self.log.borrow().clone();
        match log {
            Some(log) if !log.is_done() || log.within(after).is_some() => {
                Ok(Some(log.subscribe(after, wire)?))
            }
            _ => Ok(None),
        }
    }

    /// A watching browser's `{"type": "resume", "after": …}`: the latest turn's events after
    /// `after`, then whether it still runs.
    pub fn replay(&self, ws: &web_sys::WebSocket, id: &str, after: u64) {
        match self.log.borrow().as_ref() {
            Some(log) => log.replay(ws, after),
            None => {
                let caught_up = ConversationEvent::CaughtUp {
                    conversation_id: id.to_owned(),
                    running: false,
                };
                let _ = ws.send_with_str(&caught_up.to_json());
            }
        }
        self.tell_waiting(ws, id);
    }

    /// A watching browser's socket opened or closed.
    pub fn sockets_changed(&self) {
        if let Some(log) = self.log.borrow().as_ref() {
            log.sockets_changed();
        }
    }

    /// Asks the running logged turn (a streamed one, or a resumed one) to stop; false when none
    /// runs (a JSON turn runs to its end).
    pub fn stop(&self) -> bool {
        self.log.borrow().as_ref().is_some_and(|log| log.stop())
    }

    /// Notes that the message that waited as `waiting` is out of the line and its turn being
    /// begun: a Stop naming it meanwhile is kept for [`Self::begun`], unless it is not
    /// `stoppable` (an approved call, which runs at most once: such a Stop answers `false`).
    pub fn beginning(&self, waiting: &str, stoppable: bool) {
        *self.beginning.borrow_mut() = Some(Beginning {
            waiting: waiting.to_owned(),
            stop: stoppable.then_some(false),
        });
    }

    /// Whether a Stop named the message being begun ([`Self::beginning`]) so far.
    pub fn stop_asked(&self) -> bool {
        self.beginning
            .borrow()
            .as_ref()
            .is_some_and(|b| b.stop == Some(true))
    }

    /// Ends [`Self::beginning`]: whether a Stop named the message meanwhile (its turn, if it
    /// began, is then stopped at once).
    pub fn begun(&self) -> bool {
        self.beginning
            .borrow_mut()
            .take()
            .is_some_and(|b| b.stop == Some(true))
    }
}

/// Whether a message sent while a turn runs waits for it (`ASSISTANT_QUEUE`, default `true`)
/// rather than being refused with 409 `turn_in_progress`.
fn queues(env: &Env) -> bool {
    var(env, "ASSISTANT_QUEUE").is_none_or(|v| v.trim() != "false")
}

/// Whether a guided message sent while a turn runs waits for it (`GUIDED_QUEUE`, default
/// `true`) rather than being refused with 409 `turn_in_progress`.
pub fn guided_queues(env: &Env) -> bool {
    var(env, "GUIDED_QUEUE").is_none_or(|v| v.trim() != "false")
}

/// The JSON answer of a resumed turn: `{status: "answered", request, answer}`.
fn answered(
    out: Output,
    request: stepwise_core::handshake::ContextRequest,
    stored: bool,
) -> AppResult<Response> {
    let Some(answer) = out.answer().cloned() else {
        return out.into_json_response(stored);
    };
    let mut response =
        Response::from_json(&json!({"status": "answered", "request": request, "answer": answer}))?;
    let persisted = if stored { "true" } else { "false" };
    response
        .headers_mut()
        .set("x-stepwise-persisted", persisted)?;
    Ok(response)
}

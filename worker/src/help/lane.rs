//! A help session's turns in its object's memory: the running (or last) one, and the streamed
//! messages waiting behind it (`HELP_QUEUE`, default on; at most four, 409 `queue_full` past
//! them). A waiting message's stream says "Queued…" at once, with the id a Stop names it by; its
//! turn begins when the ones before it end, in order, and its events follow on the same stream.
//! The background task of the turn that holds the lane (from the moment it is being begun)
//! works through them, so no two turns of a session ever run at once. The session's watching
//! tabs are told when each turn begins (with the id its question waited under), when a waiting
//! question's turn could not begin, and the line of waiting questions whenever it changes.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use futures::channel::oneshot;
use serde_json::{Value, json};
use worker::worker_sys::DurableObjectState;
use worker::{Env, Response};

use super::client::{ID_HEADER, TurnOrder};
use super::live::{Ended, HelpRun};
use super::turn;
use crate::platform::ended::Earlier;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids::random_id;
use crate::platform::settings::var;
use crate::platform::sse::{EventSink, stream_response};
use crate::platform::stop::Withdrawn;

/// Most messages that wait behind a running turn.
pub const MAX_WAITING: usize = 4;

/// A streamed message waiting for its turn, its id (for a Stop) and its client's stream.
struct Waiting {
    id: String,
    order: TurnOrder,
    sink: EventSink,
}

/// A turn to run, and for a waiting message, its stream and the news of its grant.
type Next = (
    TurnOrder,
    Rc<HelpRun>,
    Option<(EventSink, oneshot::Receiver<AppResult<()>>)>,
);

/// The session's turns in this instance, shared with the task that runs them.
pub struct Lane {
    run: RefCell<Option<Rc<HelpRun>>>,
    /// The few turns before it, for a client that names one of them.
    earlier: Earlier<HelpRun>,
    waiting: RefCell<VecDeque<Waiting>>,
    /// The questions withdrawn lately: a withdrawal sent again answers the same.
    withdrawn: Withdrawn,
    /// The object's state, which holds the watching tabs' sockets.
    tabs: DurableObjectState,
}

impl Lane {
    /// The lane of an object whose state's JS handle is `tabs`.
    pub fn new(tabs: DurableObjectState) -> Lane {
        Lane {
            run: RefCell::new(None),
            earlier: Earlier::default(),
            waiting: RefCell::new(VecDeque::new()),
            withdrawn: Withdrawn::default(),
            tabs,
        }
    }

    /// The running turn, or the last one (until the next is granted).
    pub fn run(&self) -> Option<Rc<HelpRun>> {
        self.run.borrow().clone()
    }

    /// The turn whose events are numbered from `after` on (`after`: one of its numbers, or its
    /// number × 10⁶), the running one or one of the few before it: a tab that was busy or away
    /// while its own question's turn ended, and the next began, still learns how it ended.
    pub fn run_named(&self, after: u64) -> Option<Rc<HelpRun>> {
        let named = |run: &HelpRun| run.is_turn(after);
        self.run()
            .filter(|run| named(run))
            .or_else(|| self.earlier.find(named))
    }

    /// Forgets the last turns (their session was erased).
    pub fn forget(&self) {
        self.run.replace(None);
        self.earlier.clear();
    }

    /// Makes `run` the session's turn here; the one before is kept among the earlier ones.
    fn replace_run(&self, run: &Rc<HelpRun>) {
        if let Some(before) = self.run.replace(Some(run.clone())) {
            self.earlier.keep(before);
        }
    }

    /// The turn that runs, or whose waiting messages are not through yet (`None`: the session
    /// is free).
    pub fn busy(&self) -> Option<Rc<HelpRun>> {
        let run = self.run.borrow();
        run.as_ref()
            .filter(|r| !r.is_done() || !self.waiting.borrow().is_empty())
            .cloned()
    }

    /// `run` is being begun: from now on it is the session's turn here (a question arriving
    /// meanwhile waits behind it), and its task works through what waits.
    pub fn hold(&self, run: &Rc<HelpRun>) {
        self.replace_run(run);
    }

    /// The session granted `run` (held already): the watching tabs are told it began.
    pub fn granted(&self, run: &HelpRun) {
        if let Some(started) = run.started() {
            self.tell(&started);
        }
    }

    /// Tells every watching tab `message`.
    pub fn tell(&self, message: &Value) {
        let sockets = self.tabs.get_websockets().unwrap_or_default();
        if sockets.is_empty() {
            return;
        }
        let text = message.to_string();
        for ws in sockets {
            let _ = ws.send_with_str(&text);
        }
    }

    /// The questions waiting behind the running turn, first to be answered first, as the
    /// watching tabs are told them (`help:waiting`) when the line changes and when they join: a
    /// reloaded tab so shows, and can stop, the question it asked before the reload.
    pub fn line(&self) -> Value {
        let waiting = self.waiting.borrow();
        let messages: Vec<Value> = waiting
            .iter()
            .map(|w| json!({ "id": w.id, "content": w.order.message, "action": false }))
            .collect();
        json!({ "type": "help:waiting", "messages": messages })
    }

    /// Queues a streamed message of session `id` behind the running turn: its stream, which
    /// says so at once. 409 `queue_full` past [`MAX_WAITING`].
    pub fn enqueue(&self, id: &str, order: TurnOrder) -> AppResult<Response> {
        if self.waiting.borrow().len() >= MAX_WAITING {
            return Err(AppError::conflict(
                "queue_full",
                "this session already has as many questions waiting as it may; wait for an answer",
            ));
        }
        let (mut response, sink) = stream_response()?;
        response.headers_mut().set(ID_HEADER, id)?;
        let waiting = random_id()?;
        response
            .headers_mut()
            .set(crate::platform::stop::WAITING_HEADER, &waiting)?;
        let queued = json!({
            "type": "status",
            "message": "Queued: answered after the current answer…",
            "waiting": waiting,
        });
        sink.write(frame_without_id("status", &queued).as_bytes());
        self.waiting.borrow_mut().push_back(Waiting {
            id: waiting,
            order,
            sink,
        });
        self.tell(&self.line());
        Ok(response)
    }

    /// Stops the message that waits as `id`: taken out of the line, its stream ends with
    /// `stopped` (nothing of it ran); once its turn has begun, that turn is stopped. False when
    /// there is no such message, or its answer is found.
    pub fn stop_waiting(&self, id: &str) -> bool {
        self.withdraw(id)
            || self
                .run()
                .is_some_and(|run| run.is_waited(id) && run.stop())
    }

    /// Takes the message that waits as `id` out of the line (its stream ends with `stopped`:
    /// nothing of it ran); false when it is not in the line (any more: its turn may have begun,
    /// and is left to run).
    /// A question withdrawn already answers `true` again (a client whose answer was lost asks
    /// again).
    pub fn withdraw(&self, id: &str) -> bool {
        if self.withdrawn.has(id) {
            return true;
        }
        let taken = {
            let mut waiting = self.waiting.borrow_mut();
            let at = waiting.iter().position(|w| w.id == id);
            at.and_then(|at| waiting.remove(at))
        };
        let Some(Waiting { sink, .. }) = taken else {
            return false;
        };
        let stopped = json!({ "type": "stopped", "message": "" });
        sink.write(frame_without_id("stopped", &stopped).as_bytes());
        self.tell(&self.line());
        self.withdrawn.remember(id);
        true
    }

    /// Runs `run`, the turn of `order` in session `id` (held: [`Lane::hold`]), to its end; then
    /// every message waiting behind it, in order.
    pub async fn work(self: Rc<Self>, env: Env, id: String, order: TurnOrder, run: Rc<HelpRun>) {
        let first = (order, run, None);
        let mut next: Option<Next> = Some(first);
        // The turn before made the session and ended with nothing kept (it failed, or was
        // stopped), so the session is not there: the question that waited behind it makes it,
        // under the same id (made by the owner's own first question, so nobody else's).
        let mut unmade = false;
        while let Some((mut order, run, waiting)) = next.take() {
            order.create |= unmade;
            let creates = order.create;
            let ran = async {
                let ended = match turn::run(&env, &order, &id, &run).await {
                    Ok(answer) => Ended::Answer(answer),
                    Err(error) if error.code() == "turn_stopped" => Ended::Stopped,
                    Err(error) => Ended::Failed(error),
                };
                let answered = matches!(ended, Ended::Answer(_));
                run.end(ended);
                answered
            };
            let followed = async {
                let Some((sink, begun)) = waiting else {
                    return;
                };
                match begun.await {
                    Ok(Ok(())) => {
                        self.granted(&run);
                        run.attach(sink, 0);
                    }
                    Ok(Err(refused)) => {
                        let failed = json!({ "type": "error", "code": refused.code(), "message": refused.message() });
                        sink.write(frame_without_id("error", &failed).as_bytes());
                        // Every tab is told too: the one that sent it gets it back after a reload.
                        self.tell(&json!({
                            "type": "help:not_begun",
                            "waiting_id": run.waiting_id(),
                            "content": order.message,
                            "code": refused.code(),
                            "message": refused.message(),
                        }));
                    }
                    Err(_) => {}
                }
            };
            let (answered, ()) = futures::future::join(ran, followed).await;
            unmade = creates && !answered;
            // This task holds the lane: it works through what waits, in order.
            next = self.next_waiting();
        }
    }

    /// The next waiting message as a turn to run (it is the lane's turn from now on, so a
    /// message arriving meanwhile waits behind it).
    fn next_waiting(&self) -> Option<Next> {
        let Waiting { id, order, sink } = self.waiting.borrow_mut().pop_front()?;
        self.tell(&self.line());
        let (run, awaited) = HelpRun::new(&order.owner.id, &order.message);
        let run = Rc::new(run);
        run.waited_as(&id);
        self.replace_run(&run);
        Some((order, run, Some((sink, awaited.begun))))
    }
}

/// Whether a streamed message sent while a turn runs waits for it (`HELP_QUEUE`, default on)
/// rather than being refused with 409 `turn_in_progress`.
pub fn queues(env: &Env) -> bool {
    var(env, "HELP_QUEUE").is_none_or(|v| v.trim() != "false")
}

/// An event with no id: a note of the stream, not of a turn (a join never repeats it). The
/// JSON text of `data` has no line break.
fn frame_without_id(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

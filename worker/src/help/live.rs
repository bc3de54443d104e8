//! A help-desk turn as its session's Durable Object runs it (issue 29): in the background, so the
//! answer is still found and committed when the asker's tab goes away. Its few events (what it
//! is doing, then its answer, its error or `stopped`) are numbered `turn × 10⁶ + n` (the turn's
//! number in the session) and kept in memory until a few more turns have begun, so a client whose
//! connection broke joins the turn after the last event it saw (`GET
//! /api/help/sessions/:id/stream`), and a reload joins a turn still running from its start; a
//! turn that ended is not replayed to a client that did not see it begin (the session holds it). Stop (`POST /api/help/sessions/:id/stop`) drops the
//! turn's work, which closes its model call, and gives the turn up: a help answer is not shown
//! until it is whole, so nothing of a stopped one is kept and the question can be asked again.

use std::cell::{Cell, RefCell};

use futures::channel::oneshot;
use serde_json::{Value, json};
use stepwise_core::sse::frame;
use worker::Response;

use crate::platform::error::{AppError, AppResult};
use crate::platform::sse::{EventSink, stream_response};
use crate::platform::stop::{StopFlag, StopRequested};

/// How a help-desk turn ended.
pub enum Ended {
    /// Its answer, as `POST /api/help` gives it.
    Answer(Value),
    /// Its error (nothing of the turn was kept).
    Failed(AppError),
    /// Its owner stopped it (nothing of the turn was kept).
    Stopped,
}

/// What the request that began a turn waits for: whether the session granted it, and how it
/// ended.
pub struct Awaited {
    /// The session granted the turn, or refused it with this error.
    pub begun: oneshot::Receiver<AppResult<()>>,
    /// How the turn ended.
    pub ended: oneshot::Receiver<Ended>,
}

/// Events of one turn are numbered from `turn × SEQ_SPAN + 1`.
const SEQ_SPAN: u64 = 1_000_000;

/// A running (or the last) help-desk turn of a session, in its object's memory.
pub struct HelpRun {
    /// The owner id of the session: only they join or stop it.
    owner: String,
    /// The question, for the session's other tabs.
    message: String,
    /// The id its stream was given while it waited behind another turn (in its session's lane).
    waited_as: RefCell<Option<String>>,
    /// The turn's number among those the session began (set when the session grants it): a turn
    /// that failed or was stopped is not counted by the session's `turns`, and its numbers are
    /// never used again.
    turn: Cell<u64>,
    frames: RefCell<Vec<String>>,
    /// The clients' streams, each with the last event it saw (one ahead of the turn's events
    /// so far is not sent again when it comes).
    sinks: RefCell<Vec<(EventSink, u64)>>,
    ended: Cell<bool>,
    stopped: StopFlag,
    /// The answer is found: the turn commits it, and Stop no longer applies.
    answered: Cell<bool>,
    begun: RefCell<Option<oneshot::Sender<AppResult<()>>>>,
    waiting: RefCell<Option<oneshot::Sender<Ended>>>,
}

impl HelpRun {
    /// A new turn of `owner` asking `message`, and what its request waits for.
    pub fn new(owner: &str, message: &str) -> (HelpRun, Awaited) {
        let (begun, begun_rx) = oneshot::channel();
        let (answered, ended_rx) = oneshot::channel();
        let run = HelpRun {
            owner: owner.to_owned(),
            message: message.to_owned(),
            waited_as: RefCell::new(None),
            turn: Cell::new(0),
            frames: RefCell::new(Vec::new()),
            sinks: RefCell::new(Vec::new()),
            ended: Cell::new(false),
            stopped: StopFlag::default(),
            answered: Cell::new(false),
            begun: RefCell::new(Some(begun)),
            waiting: RefCell::new(Some(answered)),
        };
        let awaited = Awaited {
            begun: begun_rx,
            ended: ended_rx,
        };
        (run, awaited)
    }

    /// The turn is that of the message that waited as `id`.
    pub fn waited_as(&self, id: &str) {
        self.waited_as.replace(Some(id.to_owned()));
    }

    /// The id the turn's message waited under, if it waited.
    pub fn waiting_id(&self) -> Option<String> {
        self.waited_as.borrow().clone()
    }

    /// Whether the turn is that of the message that waited as `id`.
    pub fn is_waited(&self, id: &str) -> bool {
        self.waited_as.borrow().as_deref() == Some(id)
    }

    /// Whether `owner` is the turn's.
    pub fn is_of(&self, owner: &str) -> bool {
        self.owner == owner
    }

    /// Whether `after` is one of the turn's event numbers, or its number × 10⁶ (none of it seen).
    pub fn is_turn(&self, after: u64) -> bool {
        after >= SEQ_SPAN && after / SEQ_SPAN == self.turn.get()
    }

    /// Whether the turn has ended.
    pub fn is_done(&self) -> bool {
        self.ended.get()
    }

    /// The session granted the turn, the `turn`th it began: its events are numbered from it.
    pub fn begun(&self, turn: u64) {
        self.turn.set(turn);
        if let Some(waiting) = self.begun.borrow_mut().take() {
            // The request may have gone: the turn runs on all the same.
            let _ = waiting.send(Ok(()));
        }
    }

    /// What the session's other tabs are told of the turn while it runs
    /// (`{"type": "help:turn_started", "turn", "after", "message"}`: joined after `after`, its
    /// events all come; with `waiting_id`, the id its question waited under, when it waited);
    /// `None` once it has ended or before the session granted it.
    pub fn started(&self) -> Option<Value> {
        let turn = self.turn.get();
        (turn > 0 && !self.ended.get()).then(|| {
            let mut started = json!({
                "type": "help:turn_started",
                "turn": turn,
                "after": turn * SEQ_SPAN,
                "message": self.message,
            });
            if let Some(waiting) = self.waiting_id() {
                started["waiting_id"] = json!(waiting);
            }
            started
        })
    }

    /// A progress note (`status` event): what the turn is doing now.
    pub fn progress(&self, message: &str) {
        self.push("status", &json!({ "type": "status", "message": message }));
    }

    /// Ends the turn: its last event goes to every client, whose streams then end.
    pub fn end(&self, ended: Ended) {
        match &ended {
            Ended::Answer(answer) => self.push(
                "complete",
                &json!({ "type": "complete", "payload": answer }),
            ),
            Ended::Failed(error) => self.push(
                "error",
                &json!({ "type": "error", "code": error.code(), "message": error.message() }),
            ),
            Ended::Stopped => self.push("stopped", &json!({ "type": "stopped", "message": "" })),
        }
        self.ended.set(true);
        self.sinks.borrow_mut().clear();
        // A turn the session refused ends before it began: its request answers the refusal.
        if let Some(waiting) = self.begun.borrow_mut().take() {
            let refused = match &ended {
                Ended::Failed(error) => error.clone(),
                _ => AppError::internal(&"a help turn ended before it began"),
            };
            let _ = waiting.send(Err(refused));
        }
        if let Some(waiting) = self.waiting.borrow_mut().take() {
            let _ = waiting.send(ended);
        }
    }

    /// The turn's events after `after` as an event stream, then the live ones until it ends;
    /// `None` (nothing to join) once the turn has ended, unless `after` names it.
    pub fn subscribe(&self, after: u64) -> AppResult<Option<Response>> {
        // A client that names this turn (its number alone: none of it seen, as a tab told
        // `help:turn_started` asks) gets it whole even once it has ended, so that a turn that
        // failed at once, which the session keeps nothing of, is still told. One that names no
        // turn, or another (one no longer kept, one not begun), joins it whole while it runs
        // (once it has ended, the session holds it).
        let from = match after != 0 && self.is_turn(after) {
            true => after,
            false if self.ended.get() => return Ok(None),
            false => 0,
        };
        let (response, sink) = stream_response()?;
        self.attach(sink, from);
        Ok(Some(response))
    }

    /// Writes the turn's events after `after` to `sink`, then the live ones until it ends (a
    /// waiting message's stream, once its turn began).
    pub fn attach(&self, sink: EventSink, after: u64) {
        let turn = self.turn.get();
        for (n, frame) in self.frames.borrow().iter().enumerate() {
            if turn * SEQ_SPAN + n as u64 + 1 > after {
                sink.write(frame.as_bytes());
            }
        }
        if !self.ended.get() {
            self.sinks.borrow_mut().push((sink, after));
        }
    }

    /// The answer is found (the turn now commits it): a Stop from now on is refused.
    pub fn answered(&self) {
        self.answered.set(true);
    }

    /// Asks the turn to stop; false when it has already ended or its answer is found.
    pub fn stop(&self) -> bool {
        if self.ended.get() || self.answered.get() {
            return false;
        }
        self.stopped.set();
        true
    }

    /// Resolves once the owner asks the turn to stop.
    pub fn stop_requested(&self) -> StopRequested<'_> {
        self.stopped.requested()
    }

    fn push(&self, event: &str, data: &Value) {
        let seq = self.turn.get() * SEQ_SPAN + self.frames.borrow().len() as u64 + 1;
        let frame = frame(seq, event, &data.to_string());
        // Clients that went away are dropped as they are found.
        self.sinks
            .borrow_mut()
            .retain(|(sink, seen)| match seq > *seen {
                true => sink.write(frame.as_bytes()),
                false => sink.is_open(),
            });
        self.frames.borrow_mut().push(frame);
    }
}

/// The refusal a JSON asker gets for a turn its owner stopped.
pub fn stopped_error() -> AppError {
    AppError::conflict(
        "turn_stopped",
        "the turn was stopped before it answered; nothing of it was kept",
    )
}

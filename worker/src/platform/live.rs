//! A live turn's event log, kept by the Durable Object that runs the turn: every event gets the
//! next sequence number and is appended here before it is sent to any client; a client subscribes
//! from the last number it saw (SSE `Last-Event-ID`) and gets every later event once, in order,
//! then the live ones, in its own dialect. The turn does not depend on its clients: one that goes
//! away is dropped from the list and the turn runs on (a disconnect is not a Stop). A Stop is a
//! flag the turn reads at its next event, and a future it races the model's next chunk with.
//!
//! The log is written to the object's storage in batches (at most [`STORE_EVERY_MS`] apart, and
//! at every tool and terminal event), one key a batch: a turn writes what it adds and nothing
//! else, and erases its batches when it ends. If the object dies mid-turn, what was stored is
//! the partial answer it keeps.

use std::cell::{Cell, RefCell};

use serde::Serialize;
use stepwise_core::conversation::{ConversationEvent, Entry};
use stepwise_core::interop::ui_message::STREAM_HEADER;
use stepwise_core::protocol::StreamEvent;
use worker::worker_sys::DurableObjectState;
use worker::{ListOptions, Response, Storage, web_sys};

use super::deadline::now_ms;
use super::error::AppResult;
use super::negotiate::Wire;
use super::sse::{EventSink, stream_response};
use super::stop::{StopFlag, StopRequested};
use super::warm::Beginning;

/// Sequence numbers of one turn: `lease * SEQ_SPAN + n`, n from 1, so numbers grow across turns
/// and a number names its turn.
pub const SEQ_SPAN: u64 = 1_000_000;
/// Longest time between two stored batches, in ms.
pub const STORE_EVERY_MS: u64 = 200;
/// The storage keys of the batches (`log:<first seq, 20 digits>`).
const LOG_PREFIX: &str = "log:";

/// One event of the log: its number, the event, and for a text delta the model's own text
/// (sent as `model_delta` to clients that parse markers themselves).
#[derive(Debug, Clone, Serialize)]
pub struct Logged {
    /// The sequence number (the SSE `id`).
    pub seq: u64,
    /// The event.
    pub event: StreamEvent,
    /// The model's own text of a `text_delta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_text: Option<String>,
}

/// A client reading the log.
struct Subscriber {
    sink: EventSink,
    wire: Wire,
    /// The last event it saw: one ahead of the log (a number this turn has not reached yet) is
    /// not sent again when it comes.
    seen: u64,
}

/// The browsers watching a conversation (its object's hibernatable WebSockets): every event of
/// the turn goes to them too, as `conversation:turn_event`.
pub struct Watchers {
    /// The object's state, which holds the sockets.
    state: DurableObjectState,
    /// The conversation.
    conversation_id: String,
    /// The sockets, read from the state once and again after one opens or closes (not per
    /// event: the runtime call costs more than a delta).
    sockets: RefCell<Option<Vec<web_sys::WebSocket>>>,
}

impl Watchers {
    /// The watchers of conversation `conversation_id`, whose object's state is `state`.
    pub fn new(state: DurableObjectState, conversation_id: &str) -> Watchers {
        Watchers {
            state,
            conversation_id: conversation_id.to_owned(),
            sockets: RefCell::new(None),
        }
    }

    fn send(&self, event: &ConversationEvent) {
        let mut cache = self.sockets.borrow_mut();
        let sockets = cache.get_or_insert_with(|| self.state.get_websockets().unwrap_or_default());
        if sockets.is_empty() {
            return;
        }
        let text = event.to_json();
        for ws in sockets.iter() {
            let _ = ws.send_with_str(&text);
        }
    }
}

/// The event log of the turn of `lease`, with its clients.
pub struct TurnLog {
    lease: u32,
    storage: Storage,
    watchers: Watchers,
    /// The user's message of the turn (`None`: a resumed turn's, stored already).
    user: Option<Entry>,
    /// The id the message waited under in the line, if it waited.
    waiting: Option<String>,
    events: RefCell<Vec<Logged>>,
    subscribers: RefCell<Vec<Subscriber>>,
    /// Events already stored, the keys to erase when the turn ends (its batches, its header),
    /// and when the last batch was.
    stored: Cell<usize>,
    keys: RefCell<Vec<String>>,
    stored_at: Cell<u64>,
    done: Cell<bool>,
    stopped: StopFlag,
    /// The model's answer is whole: the turn commits as answered, and Stop no longer applies.
    answered: Cell<bool>,
    /// Batches are not stored (a turn whose conversation is not stored yet: if its object
    /// dies, nothing would read or erase them).
    in_memory: Cell<bool>,
    /// Held until the model's first text, or any other event that is not a status: objects are
    /// started ahead only once no turn of the isolate waits for its first text (`warm.rs`).
    beginning: RefCell<Option<Beginning>>,
}

impl TurnLog {
    /// An empty log for the turn of `lease` on `user`'s message (which waited in the line as
    /// `waiting`, if it did), stored in `storage`, told to `watchers` (a
    /// `conversation:turn_started` now, then every event).
    pub fn new(
        lease: u32,
        storage: Storage,
        watchers: Watchers,
        user: Option<Entry>,
        waiting: Option<String>,
    ) -> TurnLog {
        watchers.send(&watchers.started(lease, &user, &waiting));
        TurnLog {
            lease,
            storage,
            watchers,
            user,
            waiting,
            events: RefCell::new(Vec::new()),
            subscribers: RefCell::new(Vec::new()),
            stored: Cell::new(0),
            keys: RefCell::new(Vec::new()),
            stored_at: Cell::new(now_ms()),
            done: Cell::new(false),
            stopped: StopFlag::default(),
            answered: Cell::new(false),
            in_memory: Cell::new(false),
            beginning: RefCell::new(Some(Beginning::enter())),
        }
    }

    /// Whether the turn has ended.
    pub fn is_done(&self) -> bool {
        self.done.get()
    }

    /// Whether the owner asked the turn to stop.
    pub fn is_stopped(&self) -> bool {
        self.stopped.is_set()
    }

    /// Appends `event` (with a delta's model text), sends it to every client still reading, and
    /// stores the batch when it is due.
    pub async fn push(&self, event: StreamEvent, model_text: Option<String>) {
        let seq = u64::from(self.lease) * SEQ_SPAN + self.events.borrow().len() as u64 + 1;
        let urgent = !matches!(
            event,
            StreamEvent::TextDelta { .. } | StreamEvent::Status { .. }
        );
        if !matches!(event, StreamEvent::Status { .. }) {
            self.beginning.borrow_mut().take();
        }
        self.events.borrow_mut().push(Logged {
            seq,
            event,
            model_text,
        });
        {
            let events = self.events.borrow();
            let logged = events.last().expect("just appended");
            self.subscribers
                .borrow_mut()
                .retain_mut(|s| send(s, logged));
            self.watchers.send(&self.watchers.turn_event(logged));
        }
        if urgent || now_ms() >= self.stored_at.get() + STORE_EVERY_MS {
            self.store().await;
        }
    }

    /// Keeps the log in memory only: no batch is stored.
    pub fn keep_in_memory(&self) {
        self.in_memory.set(true);
    }

    /// Stores the events not stored yet, as one batch.
    pub async fn store(&self) {
        if self.in_memory.get() {
            return;
        }
        let from = self.stored.get();
        let batch: Vec<Logged> = self.events.borrow()[from..].to_vec();
        let Some(first) = batch.first() else {
            return;
        };
        let key = format!("{LOG_PREFIX}{:020}", first.seq);
        match serde_json::to_string(&batch) {
            Ok(json) => {
                if let Err(error) = self.storage.put(&key, json).await {
                    worker::console_warn!("turn log: batch {key} not stored: {error}");
                    return;
                }
            }
            Err(error) => worker::console_warn!("turn log: batch {key}: {error}"),
        }
        self.keys.borrow_mut().push(key);
        self.stored.set(from + batch.len());
        self.stored_at.set(now_ms());
    }

    /// A client joins after event `after` (0: from the start): the later events now, then the
    /// live ones, in `wire`'s dialect; the stream ends with the turn.
    pub fn subscribe(&self, after: u64, wire: Wire) -> AppResult<Response> {
        let (response, sink) = event_stream(&wire)?;
        self.attach(sink, wire, after);
        Ok(response)
    }

    /// Adds a client whose stream already exists (a queued turn's), from event `after`.
    pub fn attach(&self, sink: EventSink, wire: Wire, after: u64) {
        let first = self.within(after).unwrap_or(0);
        let mut subscriber = Subscriber {
            sink,
            wire,
            seen: first,
        };
        let open = self
            .events
            .borrow()
            .iter()
            .filter(|e| e.seq > first)
            .all(|e| send(&mut subscriber, e));
        if open && !self.done.get() {
            self.subscribers.borrow_mut().push(subscriber);
        }
    }

    /// `after` when it is one of this turn's numbers (else a client saw none of this turn; 0,
    /// also the number before a first turn's, is none).
    pub fn within(&self, after: u64) -> Option<u64> {
        (after != 0 && after / SEQ_SPAN == u64::from(self.lease)).then_some(after)
    }

    /// A watching browser asks for the events after `after` (its WebSocket's
    /// `{"type": "resume", "after": …}`): the turn's start and every later event, then
    /// `conversation:caught_up` (only that for an ended turn the browser never saw).
    pub fn replay(&self, ws: &web_sys::WebSocket, after: u64) {
        let send = |event: &ConversationEvent| {
            let _ = ws.send_with_str(&event.to_json());
        };
        let first = if let Some(after) = self.within(after) {
            after
        } else if self.done.get() {
            // An ended turn the tab never saw: the stored conversation holds it.
            send(&self.watchers.caught_up(false));
            return;
        } else {
            send(&self.watchers.started(self.lease, &self.user, &self.waiting));
            0
        };
        for logged in self.events.borrow().iter().filter(|e| e.seq > first) {
            send(&self.watchers.turn_event(logged));
        }
        send(&self.watchers.caught_up(!self.done.get()));
    }

    /// Another key of the turn's to erase when it ends.
    pub fn erase_when_done(&self, key: &str) {
        self.keys.borrow_mut().push(key.to_owned());
    }

    /// The turn ended (committed, or given up): ends every client's stream and erases its stored
    /// batches and header, which only a turn that dies needs. Late joiners read the log in
    /// memory.
    pub async fn finish(&self) {
        self.done.set(true);
        self.beginning.borrow_mut().take();
        self.subscribers.borrow_mut().clear();
        let keys = std::mem::take(&mut *self.keys.borrow_mut());
        if !keys.is_empty()
            && let Err(error) = self.storage.delete_multiple(keys).await
        {
            worker::console_warn!("turn log: batches not erased: {error}");
        }
    }

    /// The model's answer is whole (its stream ended, the turn now commits it as answered): a
    /// Stop from now on is refused, as if the turn had ended.
    pub fn answered(&self) {
        self.answered.set(true);
    }

    /// Asks the turn to stop; false when it has already ended or its answer is whole.
    pub fn stop(&self) -> bool {
        if self.done.get() || self.answered.get() {
            return false;
        }
        self.stopped.set();
        true
    }

    /// Resolves once the owner asks the turn to stop.
    pub fn stop_requested(&self) -> StopRequested<'_> {
        self.stopped.requested()
    }

    /// A socket opened or closed: the next event reads the sockets again.
    pub fn sockets_changed(&self) {
        *self.watchers.sockets.borrow_mut() = None;
    }

    /// The answer's display text so far.
    pub fn shown_text(&self) -> String {
        shown_text(&self.events.borrow())
    }
}

/// An event stream in `wire`'s dialect (with the UI message stream's header) and its sink.
pub fn event_stream(wire: &Wire) -> AppResult<(Response, EventSink)> {
    let (mut response, sink) = stream_response()?;
    if matches!(wire, Wire::UiMessage(_)) {
        response
            .headers_mut()
            .set(STREAM_HEADER.0, STREAM_HEADER.1)?;
    }
    Ok((response, sink))
}

/// Writes an event that belongs to no turn's log yet (a queued message's status, a queued turn
/// that could not begin) to one client: no `id`, so a reconnecting client never resumes from it.
pub fn note(sink: &EventSink, wire: &mut Wire, event: &StreamEvent) {
    let frame = match wire {
        Wire::Stepwise { .. } => {
            let data = serde_json::to_string(event).unwrap_or_default();
            format!("event: {}\ndata: {data}\n\n", event.name())
        }
        Wire::UiMessage(encoder) => encoder.encode(event),
        Wire::AgUi(encoder) => encoder.encode(event),
    };
    sink.write(frame.as_bytes());
}

/// The display text among `events`.
fn shown_text(events: &[Logged]) -> String {
    events
        .iter()
        .filter_map(|e| match &e.event {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The display text the stored batches of the turn of `lease` hold, for a turn whose object
/// died. Read as plain JSON values: a reader of whole events would link every event type's
/// deserializer into the Worker for this one use.
pub async fn stored_text(storage: &Storage, lease: u32) -> AppResult<String> {
    let batches = storage
        .list_with_options(ListOptions::new().prefix(LOG_PREFIX))
        .await?;
    let mut text = String::new();
    for value in batches.values() {
        let json = value.ok().and_then(|v| v.as_string()).unwrap_or_default();
        let batch: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap_or_default();
        for logged in batch {
            let seq = logged["seq"].as_u64().unwrap_or(0);
            if seq / SEQ_SPAN == u64::from(lease) && logged["event"]["type"] == "text_delta" {
                text.push_str(logged["event"]["text"].as_str().unwrap_or(""));
            }
        }
    }
    Ok(text)
}

/// Erases every stored batch (those of a turn whose object died, once it is settled).
pub async fn clear_stored(storage: &Storage) -> AppResult<()> {
    let batches = storage
        .list_with_options(ListOptions::new().prefix(LOG_PREFIX))
        .await?;
    let keys: Vec<String> = batches
        .keys()
        .into_iter()
        .filter_map(|k| k.ok()?.as_string())
        .collect();
    if !keys.is_empty() {
        storage.delete_multiple(keys).await?;
    }
    Ok(())
}

impl Watchers {
    fn started(
        &self,
        lease: u32,
        user: &Option<Entry>,
        waiting: &Option<String>,
    ) -> ConversationEvent {
        ConversationEvent::TurnStarted {
            conversation_id: self.conversation_id.clone(),
            lease,
            message: user.clone(),
            waiting_id: waiting.clone(),
        }
    }

    /// `logged` for a browser: text as the model wrote it (`model_delta`) where there is some.
    fn turn_event(&self, logged: &Logged) -> ConversationEvent {
        let event = match (&logged.event, logged.model_text.as_deref()) {
            (StreamEvent::TextDelta { .. }, Some(text)) if !text.is_empty() => {
                StreamEvent::ModelDelta {
                    text: text.to_owned(),
                }
            }
            (event, _) => event.clone(),
        };
        ConversationEvent::TurnEvent {
            conversation_id: self.conversation_id.clone(),
            seq: logged.seq,
            event,
        }
    }

    /// Tells a browser whether a turn still runs once it has what it missed.
    pub fn caught_up(&self, running: bool) -> ConversationEvent {
        ConversationEvent::CaughtUp {
            conversation_id: self.conversation_id.clone(),
            running,
        }
    }
}

/// Sends one event to a client in its dialect; false once the client has gone away.
fn send(subscriber: &mut Subscriber, logged: &Logged) -> bool {
    if logged.seq <= subscriber.seen {
        return subscriber.sink.is_open();
    }
    let frame = match (&mut subscriber.wire, &logged.event) {
        (Wire::Stepwise { model_deltas: true }, StreamEvent::TextDelta { .. }) => {
            match logged.model_text.as_deref().filter(|t| !t.is_empty()) {
                Some(text) => StreamEvent::ModelDelta {
                    text: text.to_owned(),
                }
                .to_sse(logged.seq),
                None => String::new(),
            }
        }
        // A delta of the model's own text only (a marker line) has nothing to show.
        (_, StreamEvent::TextDelta { text }) if text.is_empty() => String::new(),
        (Wire::Stepwise { .. }, event) => event.to_sse(logged.seq),
        (Wire::UiMessage(encoder), event) => encoder.encode(event),
        (Wire::AgUi(encoder), event) => encoder.encode(event),
    };
    if frame.is_empty() {
        return subscriber.sink.is_open();
    }
    subscriber.sink.write(frame.as_bytes())
}

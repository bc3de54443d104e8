//! Resumable call streams (Streamable HTTP's `Last-Event-ID`): a long call's messages (its
//! questions, progress and result) are events with ids, `<stream>-<n>`, kept in the session's
//! object while the call runs and for a while after. A client whose connection drops opens
//! `GET /mcp` with the last id it saw and gets every later event once, in order, then the live
//! ones; the call runs on meanwhile, and waits for the client at most [`GONE_AT_MOST_MS`]. For
//! clients of protocol 2025-11-25 the stream opens with an event that has an id and no data, so
//! that a client can resume even before the first message (older clients may not take an event
//! without data). The events live in the object's memory: a call keeps its object running, but
//! an ended call's events last only as long as the idle object does, five minutes at most.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;
use worker::Response;

use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::ids;
use crate::platform::sse::{EventSink, stream_response};

/// How long a call goes on without a client reading it: past this, a question is given up as
/// unanswered and a job is no longer followed (it runs on, and `research_status` finds it).
pub const GONE_AT_MOST_MS: u64 = 60_000;
/// How long a finished call's events can still be replayed.
const KEPT_AFTER_END_MS: u64 = 300_000;
/// Most events one call's stream keeps (a call writes a question per step and a notification
/// per provider, far fewer).
const MAX_EVENTS: usize = 1_000;
/// How long a reader cut off by a newer one is told to wait before it reconnects.
const SUPERSEDED_RETRY_MS: u64 = 10_000;

/// One call's stream: its events, and the client reading it now, if any.
pub struct CallStream {
    id: String,
    /// Each event's frame, in order; event `n` (from 1) is `frames[n - 1]`.
    frames: RefCell<Vec<String>>,
    sink: RefCell<Option<EventSink>>,
    /// When the last client went away (ms since the epoch); `None` while one reads.
    gone_since: Cell<Option<u64>>,
    /// When the call ended (ms since the epoch).
    ended_at: Cell<Option<u64>>,
}

impl CallStream {
    /// Writes `message` as the stream's next event, to the client reading it if any; the event
    /// is kept for a client that resumes.
    /// Past [`MAX_EVENTS`], notifications are dropped (never a request or the response).
    pub fn send(&self, message: &Value) {
        let mut frames = self.frames.borrow_mut();
        if frames.len() >= MAX_EVENTS && message.get("id").is_none() {
            worker::console_warn!("mcp: stream {} past {MAX_EVENTS} events", self.id);
            return;
        }
        let frame = format!("id: {}-{}\ndata: {message}\n\n", self.id, frames.len() + 1);
        self.deliver(&frame);
        frames.push(frame);
    }

    /// Writes a comment (a keep-alive) to the client reading, if any; not kept.
    pub fn comment(&self, text: &str) {
        self.deliver(&format!(": {text}\n\n"));
    }

    /// How long no client has read the stream (0 while one does).
    pub fn gone_for_ms(&self) -> u64 {
        self.is_read();
        self.gone_since
            .get()
            .map_or(0, |since| now_ms().saturating_sub(since))
    }

    /// Whether a client reads the stream now.
    fn is_read(&self) -> bool {
        let open = self.sink.borrow().as_ref().is_some_and(EventSink::is_open);
        if !open && self.gone_since.get().is_none() {
            self.sink.borrow_mut().take();
            self.gone_since.set(Some(now_ms()));
        }
        open
    }

    fn deliver(&self, frame: &str) {
        if self.is_read()
            && let Some(sink) = self.sink.borrow().as_ref()
        {
            sink.write(frame.as_bytes());
        }
    }

    /// The call ended: its stream closes once its events are read.
    fn end(&self) {
        self.ended_at.set(Some(now_ms()));
        self.sink.borrow_mut().take();
    }

    /// A client's new connection, from event `after` on: the later events, then (while the call
    /// runs) the live ones. A client reading before is cut off, told to wait before it tries
    /// again (two readers of one stream would otherwise take it from each other at once).
    fn attach(&self, after: usize) -> AppResult<Response> {
        let (response, sink) = stream_response()?;
        for frame in self.frames.borrow().iter().skip(after) {
            sink.write(frame.as_bytes());
        }
        if self.ended_at.get().is_none() {
            if let Some(before) = self.sink.borrow_mut().replace(sink) {
                before.write(format!("retry: {SUPERSEDED_RETRY_MS}\n\n").as_bytes());
            }
            self.gone_since.set(None);
        }
        Ok(response)
    }

    fn expired(&self, now: u64) -> bool {
        self.ended_at
            .get()
            .is_some_and(|at| now.saturating_sub(at) >= KEPT_AFTER_END_MS)
    }
}

/// The session's call streams, by id.
#[derive(Default)]
pub struct Streams {
    open: RefCell<HashMap<String, Rc<CallStream>>>,
    /// The session's client takes an opening event without data (protocol 2025-11-25 on).
    priming: Cell<bool>,
}

impl Streams {
    /// Whether the session's client takes an opening event without data: it negotiated
    /// protocol `version`, 2025-11-25 or later.
    pub fn set_version(&self, version: &str) {
        self.priming.set(version >= "2025-11-25");
    }

    /// A new call's stream, read by the client of `sink`: its opening event is written.
    pub fn open(&self, sink: EventSink) -> AppResult<Rc<CallStream>> {
        self.prune();
        let id = ids::random_id()?;
        if self.priming.get() {
            sink.write(format!("id: {id}-0\ndata: \n\n").as_bytes());
        }
        let stream = Rc::new(CallStream {
            id: id.clone(),
            frames: RefCell::new(Vec::new()),
            sink: RefCell::new(Some(sink)),
            gone_since: Cell::new(None),
            ended_at: Cell::new(None),
        });
        self.open.borrow_mut().insert(id, Rc::clone(&stream));
        Ok(stream)
    }

    /// The call of `stream` ended.
    pub fn end(&self, stream: &CallStream) {
        stream.end();
        self.prune();
    }

    /// Forgets the streams whose call ended more than [`KEPT_AFTER_END_MS`] ago.
    fn prune(&self) {
        let now = now_ms();
        self.open
            .borrow_mut()
            .retain(|_, stream| !stream.expired(now));
    }

    /// A client resumes after `last_event_id` (`<stream>-<n>`): its stream, or `None` when the
    /// session holds no such stream (never, or no longer).
    pub fn resume(&self, last_event_id: &str) -> AppResult<Option<Response>> {
        self.prune();
        let Some((id, seen)) = last_event_id.trim().rsplit_once('-') else {
            return Ok(None);
        };
        let Ok(seen) = seen.parse::<usize>() else {
            return Ok(None);
        };
        let stream = self.open.borrow().get(id).cloned();
        match stream {
            Some(stream) if seen <= stream.frames.borrow().len() => stream.attach(seen).map(Some),
            _ => Ok(None),
        }
    }
}

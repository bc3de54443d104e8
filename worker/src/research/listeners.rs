//! Open `GET /api/research/:id/events` streams of one job, held by its Durable Object: each
//! starts with a `snapshot` of the job, then gets every lifecycle event as it happens, and ends
//! with an `end` event once the job is completed, failed or deleted (a client should then close
//! rather than reconnect; a retry opens a new stream). A heartbeat comment goes out every
//! `STREAM_HEARTBEAT_MS` (15 s) so proxies keep the stream open, and a stream opened on a draft
//! is closed after `DRAFT_STREAM_MS` (10 minutes): nothing happens to a draft until it starts.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use futures::channel::mpsc;
use serde::Serialize;
use stepwise_core::research::{Research, ResearchEvent, ResearchStatus};
use stepwise_core::sse::frame;
use worker::{Delay, Response};

use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::sse;

/// Most streams one job serves at once; more are refused with 429.
const MAX_LISTENERS: usize = 32;

type Sender = mpsc::UnboundedSender<worker::Result<Vec<u8>>>;

/// One open stream, the id of its next event, and when it closes by itself.
struct Listener {
    sender: Sender,
    next_id: u64,
    close_at: Option<u64>,
}

impl Listener {
    /// Writes one event; false when the client has gone.
    fn send(&mut self, event: &str, data: &str) -> bool {
        let frame = frame(self.next_id, event, data);
        self.next_id += 1;
        self.sender.unbounded_send(Ok(frame.into_bytes())).is_ok()
    }

    /// Writes a comment line; false when the client has gone.
    fn beat(&mut self) -> bool {
        self.sender
            .unbounded_send(Ok(b": heartbeat\n\n".to_vec()))
            .is_ok()
    }
}

/// How often heartbeats go out, and how long a draft's stream stays open, in ms.
#[derive(Debug, Clone, Copy)]
pub struct StreamTimes {
    /// Between two heartbeat comments.
    pub heartbeat_ms: u64,
    /// A stream opened on a draft closes after this.
    pub draft_stream_ms: u64,
}

/// The open streams of one job.
#[derive(Default)]
pub struct Listeners {
    open: Rc<RefCell<Vec<Listener>>>,
    /// Whether the heartbeat loop runs.
    beating: Rc<Cell<bool>>,
}

impl Listeners {
    /// Opens a stream that starts with the job's snapshot (and ends at once if the job is done).
    pub fn open(&self, research: &Research, times: StreamTimes) -> AppResult<Response> {
        let (sender, receiver) = mpsc::unbounded();
        let close_at = (research.status == ResearchStatus::Draft)
            .then(|| now_ms().saturating_add(times.draft_stream_ms));
        let mut listener = Listener {
            sender,
            next_id: 0,
            close_at,
        };
        let mut open = self.open.borrow_mut();
        open.retain(|l| !l.sender.is_closed());
        if open.len() >= MAX_LISTENERS {
            return Err(AppError::too_many_streams());
        }
        listener.send("snapshot", &json(&research.view()));
        if is_final(research.status) {
            listener.send("end", "{}");
        } else {
            open.push(listener);
            if !self.beating.replace(true) {
                self.keep_alive(times);
            }
        }
        Ok(sse::response(receiver)?)
    }

    /// Sends events to every open stream, drops streams whose client left, and ends them all
    /// when the job reached a final status.
    pub fn broadcast(&self, research: &Research, events: &[&ResearchEvent]) {
        let mut open = self.open.borrow_mut();
        if open.is_empty() {
            return;
        }
        let frames: Vec<(&str, String)> = events.iter().map(|e| (e.name(), json(e))).collect();
        open.retain_mut(|listener| frames.iter().all(|(name, data)| listener.send(name, data)));
        if is_final(research.status) {
            end_all(&mut open);
        } else if research.status != ResearchStatus::Draft {
            // A started job's streams stay open until it ends.
            for listener in open.iter_mut() {
                listener.close_at = None;
            }
        }
    }

    /// Ends every stream (the job was deleted).
    pub fn end(&self) {
        end_all(&mut self.open.borrow_mut());
    }

    /// Sends a heartbeat to every open stream every `heartbeat_ms` and closes draft streams past
    /// their time, until no stream is left (the next one to open starts it again).
    fn keep_alive(&self, times: StreamTimes) {
        let open = Rc::clone(&self.open);
        let beating = Rc::clone(&self.beating);
        worker::wasm_bindgen_futures::spawn_local(async move {
            loop {
                Delay::from(Duration::from_millis(times.heartbeat_ms)).await;
                let mut open = open.borrow_mut();
                let now = now_ms();
                open.retain_mut(|listener| match listener.close_at {
                    Some(at) if at <= now => {
                        listener.send("end", "{}");
                        false
                    }
                    _ => listener.beat(),
                });
                if open.is_empty() {
                    beating.set(false);
                    break;
                }
            }
        });
    }
}

fn end_all(open: &mut Vec<Listener>) {
    for listener in open.iter_mut() {
        listener.send("end", "{}");
    }
    // Dropping the senders ends the streams.
    open.clear();
}

/// Whether no further event can come without a user action (a retry opens a new stream).
fn is_final(status: ResearchStatus) -> bool {
    matches!(status, ResearchStatus::Completed | ResearchStatus::Failed)
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

//! Open `GET /api/research/:id/events` streams of one job, held by its Durable Object: each
//! starts with a `snapshot` of the record, then gets every lifecycle event as it happens, and
//! ends with an `end` event once the job is completed or failed (a client should then close
//! rather than reconnect; a retry opens a new stream).

use std::cell::RefCell;

use futures_channel::mpsc;
use serde::Serialize;
use stepwise_core::research::{Research, ResearchEvent, ResearchStatus};
use stepwise_core::sse::frame;
use worker::Response;

use crate::platform::error::{AppError, AppResult};
use crate::platform::sse;

/// Most streams one job serves at once; more are refused with 429.
const MAX_LISTENERS: usize = 32;

type Sender = mpsc::UnboundedSender<worker::Result<Vec<u8>>>;

/// One open stream and the id of its next event.
struct Listener {
    sender: Sender,
    next_id: u64,
}

impl Listener {
    /// Writes one frame; false when the client has gone.
    fn send(&mut self, event: &str, data: &str) -> bool {
        let frame = frame(self.next_id, event, data);
        self.next_id += 1;
        self.sender.unbounded_send(Ok(frame.into_bytes())).is_ok()
    }
}

/// The open streams of one job.
#[derive(Default)]
pub struct Listeners {
    open: RefCell<Vec<Listener>>,
}

impl Listeners {
    /// Opens a stream that starts with the job's snapshot (and ends at once if the job is done).
    pub fn open(&self, research: &Research) -> AppResult<Response> {
        let (sender, receiver) = mpsc::unbounded();
        let mut listener = Listener { sender, next_id: 0 };
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
        }
        Ok(sse::response(receiver)?)
    }

    /// Sends events to every open stream, drops streams whose client left, and closes them all
    /// when the job reached a final status.
    pub fn broadcast(&self, research: &Research, events: &[&ResearchEvent]) {
        let mut open = self.open.borrow_mut();
        if open.is_empty() {
            return;
        }
        let frames: Vec<(&str, String)> = events.iter().map(|e| (e.name(), json(e))).collect();
        open.retain_mut(|listener| frames.iter().all(|(name, data)| listener.send(name, data)));
        if is_final(research.status) {
            for listener in open.iter_mut() {
                listener.send("end", "{}");
            }
            // Dropping the senders ends the streams.
            open.clear();
        }
    }
}

/// Whether no further event can come without a user action (a retry opens a new stream).
fn is_final(status: ResearchStatus) -> bool {
    matches!(status, ResearchStatus::Completed | ResearchStatus::Failed)
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

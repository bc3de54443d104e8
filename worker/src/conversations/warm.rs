//! New conversations' objects started ahead of their first turn. A first turn runs on a new
//! object, and starting one is what a first turn cost beyond a later one (on workerd, about
//! 2.8 ms: bench/README.md "First turns on objects started ahead"). So each isolate
//! keeps a few ids whose objects it has already started (`POST /warm`, which reads and stores
//! nothing): a first turn takes one, and [`REFILL_AFTER_MS`] after the request has answered,
//! its Worker starts as many as were taken since the last refill, in `waitUntil`, off the turn's
//! path. Started at once, they competed with the turn's own model call where the edge and the
//! objects share a thread, as locally (bench/README.md "First turns: the refill waits").
//!
//! An id is handed out once and is as random as any other (the pool only holds ids, never
//! anything of an owner). An object idle too long is evicted by the runtime; an id kept longer
//! than [`KEPT_FOR_MS`] is dropped unused, since its object would start again anyway. An id lost
//! with its isolate leaves an object that stored nothing.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

use worker::{Delay, Env};

use super::client::BINDING;
use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::ids;
use crate::platform::js::{ObjectCall, call_object};

/// How long a started object's id is handed out, in ms (idle objects are evicted after about
/// ten seconds when they hold no connection).
pub const KEPT_FOR_MS: u64 = 8_000;
/// The most ids an isolate keeps started, and starts in one refill.
pub const MOST_KEPT: usize = 64;

/// How long after the request a refill waits, in ms, so that the objects it starts do not
/// compete with the first turn's own model call.
pub const REFILL_AFTER_MS: u64 = 100;

/// The isolate's started objects and how many were taken since the last refill.
#[derive(Default)]
struct Started {
    /// Ids and when their objects answered, oldest first.
    ready: VecDeque<(String, u64)>,
    /// Ids taken (or missed) since the last refill.
    wanted: usize,
}

thread_local! {
    static STARTED: RefCell<Started> = RefCell::new(Started::default());
}

/// A new conversation's id: one whose object is already started if the isolate has one (the
/// refill after this request starts another), else a fresh random one.
pub fn new_conversation_id() -> AppResult<String> {
    let now = now_ms();
    let taken = STARTED.with(|started| {
        let mut started = started.borrow_mut();
        while started
            .ready
            .front()
            .is_some_and(|(_, at)| now.saturating_sub(*at) > KEPT_FOR_MS)
        {
            started.ready.pop_front();
        }
        started.wanted = (started.wanted + 1).min(MOST_KEPT);
        started.ready.pop_front().map(|(id, _)| id)
    });
    match taken {
        Some(id) => Ok(id),
        None => ids::random_id(),
    }
}

/// Whether ids were taken since the last refill.
pub fn wanted() -> bool {
    STARTED.with(|started| started.borrow().wanted > 0)
}

/// Starts as many objects as were taken since the last refill (at most [`MOST_KEPT`] kept), all
/// at once; each id joins the pool once its object has answered. A failure only costs the id.
pub async fn refill(env: Env) {
    Delay::from(Duration::from_millis(REFILL_AFTER_MS)).await;
    let count = STARTED.with(|started| {
        let mut started = started.borrow_mut();
        let room = MOST_KEPT.saturating_sub(started.ready.len());
        std::mem::take(&mut started.wanted).min(room)
    });
    let starts = (0..count).map(|_| start_one(&env));
    futures::future::join_all(starts).await;
}

/// Starts one new object and keeps its id.
async fn start_one(env: &Env) {
    let Ok(id) = ids::random_id() else { return };
    let call = ObjectCall {
        method: "POST",
        url: "https://conversations.internal/warm",
        headers: &[],
        body: None,
    };
    if let Ok((204, _)) = call_object(env, BINDING, &id, call).await {
        let at = now_ms();
        STARTED.with(|started| started.borrow_mut().ready.push_back((id, at)));
    }
}

//! Durable Objects started ahead of the first request they serve. A new conversation's first
//! turn, or a new help session's first question, runs on a new object, and starting one is what
//! that first turn cost beyond a later one (on workerd, about 2.8 ms: bench/README.md "First
//! turns on objects started ahead"). So each isolate keeps a few ids per binding whose objects
//! it has already started (`POST /warm`, which the objects answer at once, reading and storing
//! nothing): a first turn takes one, and [`REFILL_AFTER_MS`] after the request has answered, its
//! Worker starts as many as were taken since the last refill, in `waitUntil`, off the turn's
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

use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::ids;
use crate::platform::js::{ObjectCall, call_object};

/// How long a started object's id is handed out, in ms (idle objects are evicted after about
/// ten seconds when they hold no connection).
pub const KEPT_FOR_MS: u64 = 8_000;
/// The most ids an isolate keeps started per binding, and starts in one refill.
pub const MOST_KEPT: usize = 64;
/// How long after the request a refill waits, in ms, so that the objects it starts do not
/// compete with the first turn's own model call.
pub const REFILL_AFTER_MS: u64 = 100;

/// One binding's started objects and how many were taken since the last refill.
struct Started {
    /// The Durable Object binding's name in wrangler.toml.
    binding: &'static str,
    /// Ids and when their objects answered, oldest first.
    ready: VecDeque<(String, u64)>,
    /// Ids taken (or missed) since the last refill.
    wanted: usize,
}

thread_local! {
    /// The isolate's started objects, one entry per binding that was asked for an id.
    static STARTED: RefCell<Vec<Started>> = const { RefCell::new(Vec::new()) };
}

/// A new object's id for `binding`: one whose object is already started if the isolate has one
/// (the refill after this request starts another), else a fresh random one.
pub fn new_id(binding: &'static str) -> AppResult<String> {
    let now = now_ms();
    let taken = STARTED.with(|started| {
        let mut started = started.borrow_mut();
        let at = match started.iter().position(|pool| pool.binding == binding) {
            Some(at) => at,
            None => {
                started.push(Started {
                    binding,
                    ready: VecDeque::new(),
                    wanted: 0,
                });
                started.len() - 1
            }
        };
        let pool = &mut started[at];
        while pool
            .ready
            .front()
            .is_some_and(|(_, at)| now.saturating_sub(*at) > KEPT_FOR_MS)
        {
            pool.ready.pop_front();
        }
        pool.wanted = (pool.wanted + 1).min(MOST_KEPT);
        pool.ready.pop_front().map(|(id, _)| id)
    });
    match taken {
        Some(id) => Ok(id),
        None => ids::random_id(),
    }
}

/// Whether ids were taken since the last refill.
pub fn wanted() -> bool {
    STARTED.with(|started| started.borrow().iter().any(|pool| pool.wanted > 0))
}

/// After [`REFILL_AFTER_MS`], starts as many objects of each binding as were taken since the
/// last refill (at most [`MOST_KEPT`] kept), all at once; each id joins its pool once its object
/// has answered. A failure only costs the id.
pub async fn refill(env: Env) {
    Delay::from(Duration::from_millis(REFILL_AFTER_MS)).await;
    let starts: Vec<&'static str> = STARTED.with(|started| {
        let mut started = started.borrow_mut();
        let mut starts = Vec::new();
        for pool in started.iter_mut() {
            let room = MOST_KEPT.saturating_sub(pool.ready.len());
            let count = std::mem::take(&mut pool.wanted).min(room);
            starts.extend(std::iter::repeat_n(pool.binding, count));
        }
        starts
    });
    futures::future::join_all(starts.into_iter().map(|binding| start_one(&env, binding))).await;
}

/// Starts one new object of `binding` and keeps its id.
async fn start_one(env: &Env, binding: &'static str) {
    let Ok(id) = ids::random_id() else { return };
    let url = format!("https://{binding}.internal/warm");
    let call = ObjectCall {
        method: "POST",
        url: &url,
        headers: &[],
        body: None,
    };
    if let Ok((204, _)) = call_object(env, binding, &id, call).await {
        let at = now_ms();
        STARTED.with(|started| {
            let mut started = started.borrow_mut();
            if let Some(pool) = started.iter_mut().find(|pool| pool.binding == binding) {
                pool.ready.push_back((id, at));
            }
        });
    }
}

//! Durable Objects started ahead of the first request they serve. A new conversation's first
//! turn, or a new help session's first question, runs on a new object, and starting one is what
//! that first turn cost beyond a later one (on workerd, about 2.8 ms: bench/README.md "First
//! turns on objects started ahead"). So each isolate keeps a few ids per binding whose objects
//! it has already started (`POST /warm`, which the objects answer at once, reading and storing
//! nothing): a first turn takes one, and once the isolate begins nothing (at least
//! [`REFILL_AFTER_MS`] after the request has answered, no request being routed and no turn
//! waiting for its model's first text: [`Beginning`]), its Worker starts as many as were taken
//! since the last refill, in `waitUntil`, off the turns' path. Started sooner, they competed with
//! the turns being begun where the edge and the objects share a thread, as locally: at 50 first
//! turns in flight, their first text came after the refill's 50 object starts (bench/README.md
//! "First turns: the refill waits" and "The refill waits for an isolate that begins nothing").
//!
//! An id is handed out once and is as random as any other (the pool only holds ids, never
//! anything of an owner). An object idle too long is evicted by the runtime; an id kept longer
//! than [`KEPT_FOR_MS`] is dropped unused, since its object would start again anyway. An id lost
//! with its isolate leaves an object that stored nothing.

use std::cell::{Cell, RefCell};
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
/// How long after the request a refill waits at least, in ms, so that the objects it starts do
/// not compete with the first turn's own model call.
pub const REFILL_AFTER_MS: u64 = 100;
/// How often a waiting refill looks whether the isolate still begins something, in ms.
const QUIET_POLL_MS: u64 = 10;
/// The longest a refill waits for an isolate that begins nothing, in ms: one always busy still
/// refills.
pub const QUIET_WAIT_MAX_MS: u64 = 1_000;
/// A refill waiting longer than this is taken for lost (its request's `waitUntil` ended), in ms.
const WAITING_FOR_MS: u64 = 5_000;

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
    /// The requests and turns the isolate is beginning ([`Beginning`]).
    static BEGINNING: Cell<u32> = const { Cell::new(0) };
    /// When the refill that waits for the isolate began waiting (ms), if one does.
    static WAITING_SINCE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Something the isolate is beginning, until dropped: a request, from its entry until it has its
/// answer, or a streamed turn, from its log's start until its model's first text (or its end).
/// While any is, a refill waits.
pub struct Beginning(());

impl Beginning {
    /// Counts one more thing being begun.
    pub fn enter() -> Beginning {
        BEGINNING.with(|count| count.set(count.get() + 1));
        Beginning(())
    }
}

impl Drop for Beginning {
    fn drop(&mut self) {
        BEGINNING.with(|count| count.set(count.get().saturating_sub(1)));
    }
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

/// Whether ids were taken since the last refill and no refill waits for them already.
pub fn wanted() -> bool {
    let waiting = WAITING_SINCE
        .with(Cell::get)
        .is_some_and(|since| now_ms().saturating_sub(since) < WAITING_FOR_MS);
    !waiting && STARTED.with(|started| started.borrow().iter().any(|pool| pool.wanted > 0))
}

/// After [`REFILL_AFTER_MS`], once the isolate begins nothing ([`Beginning`]; or after
/// [`QUIET_WAIT_MAX_MS`] more), starts as many objects of each binding as were taken since the
/// last refill (at most [`MOST_KEPT`] kept), all at once; each id joins its pool once its object
/// has answered. A failure only costs the id. One refill waits at a time ([`wanted`]).
pub async fn refill(env: Env) {
    WAITING_SINCE.with(|since| since.set(Some(now_ms())));
    Delay::from(Duration::from_millis(REFILL_AFTER_MS)).await;
    let mut waited = 0;
    while BEGINNING.with(Cell::get) > 0 && waited < QUIET_WAIT_MAX_MS {
        Delay::from(Duration::from_millis(QUIET_POLL_MS)).await;
        waited += QUIET_POLL_MS;
    }
    WAITING_SINCE.with(|since| since.set(None));
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

//! Outbound calls with a deadline: a future raced against the platform's timer, and a fetch
//! that gives up when its deadline passes. Used for model calls, error bodies and webhooks; and
//! Durable Object alarms: the delay until a time that they take, and [`Alarm`], which sets one
//! only when it must.

use std::cell::Cell;
use std::future::Future;
use std::time::Duration;

use futures::future::{Either, select};
use worker::{Delay, Fetch, Request, Response, Storage};

/// Why a fetch within a deadline did not return a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchFailure {
    /// The connection failed (refused, reset, DNS).
    Unreachable,
    /// No response head arrived before the deadline.
    TimedOut,
}

/// `future`'s output, or `None` when `limit` passes first (the future is then dropped).
pub async fn within<F: Future>(limit: Duration, future: F) -> Option<F::Output> {
    match select(Box::pin(future), Box::pin(Delay::from(limit))).await {
        Either::Left((output, _)) => Some(output),
        Either::Right(_) => None,
    }
}

/// Sends `request` and waits at most `limit` for the response head.
pub async fn fetch_within(request: Request, limit: Duration) -> Result<Response, FetchFailure> {
    match within(limit, Fetch::Request(request).send()).await {
        Some(Ok(response)) => Ok(response),
        Some(Err(_)) => Err(FetchFailure::Unreachable),
        None => Err(FetchFailure::TimedOut),
    }
}

/// Milliseconds since the epoch, from the platform's clock.
pub fn now_ms() -> u64 {
    worker::js_sys::Date::now() as u64
}

/// The delay from now until `at` (ms since the epoch), for a Durable Object's `set_alarm`,
/// which reads a number as an offset from now, never as a time (at least 1 ms).
pub fn alarm_delay(at: u64) -> i64 {
    (at.saturating_sub(now_ms()) as i64).max(1)
}

/// A Durable Object's alarm as this instance set it. It is set again only for a wake earlier
/// than the one set: most commands only push a deadline later, and an alarm that fires before
/// anything is due sets itself again for the next wake (each object's alarm handler does), so
/// they make no storage call for it (`setAlarm` was 0.2-0.4 ms of a turn's CPU, bench/README.md).
#[derive(Default)]
pub struct Alarm(Cell<Option<u64>>);

impl Alarm {
    /// Wakes the object at `at` (ms since the epoch) or earlier.
    pub async fn at(&self, storage: &Storage, at: u64) -> worker::Result<()> {
        if self.0.get().is_some_and(|armed| armed <= at) {
            return Ok(());
        }
        storage.set_alarm(alarm_delay(at)).await?;
        self.0.set(Some(at));
        Ok(())
    }

    /// Removes the alarm.
    pub async fn clear(&self, storage: &Storage) -> worker::Result<()> {
        storage.delete_alarm().await?;
        self.0.set(None);
        Ok(())
    }

    /// Forgets what was set: the alarm fired, or the object's storage was erased.
    pub fn forget(&self) {
        self.0.set(None);
    }
}

//! Outbound calls with a deadline: a future raced against the platform's timer, and a fetch
//! that gives up when its deadline passes. Used for model calls, error bodies and webhooks; and the
//! delay until a time that Durable Object alarms take.

use std::future::Future;
use std::time::Duration;

use futures::future::{Either, select};
use worker::{Delay, Fetch, Request, Response};

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

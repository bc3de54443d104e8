//! A running turn's Stop: a flag its owner sets once, and a future the turn races against its
//! next piece of work (a model's next chunk, a pipeline's next effect); and the body of a Stop
//! route, which may name one waiting message instead ([`stop_path`]).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;

/// Set once by a Stop; [`StopFlag::requested`] resolves when it is.
#[derive(Default)]
pub struct StopFlag {
    set: Cell<bool>,
    /// The task waiting on [`StopFlag::requested`].
    waker: RefCell<Option<Waker>>,
}

impl StopFlag {
    /// Sets the flag and wakes the task waiting on it.
    pub fn set(&self) {
        self.set.set(true);
        if let Some(waker) = self.waker.borrow_mut().take() {
            waker.wake();
        }
    }

    /// Whether the flag is set.
    pub fn is_set(&self) -> bool {
        self.set.get()
    }

    /// Resolves once the flag is set.
    pub fn requested(&self) -> StopRequested<'_> {
        StopRequested(self)
    }
}

/// The future of [`StopFlag::requested`].
pub struct StopRequested<'a>(&'a StopFlag);

impl Future for StopRequested<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.set.get() {
            return Poll::Ready(());
        }
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// The header naming a waiting message's stream (a conversation's or a help session's): its
/// id, which a Stop of that message alone names ([`stop_path`]).
pub const WAITING_HEADER: &str = "x-stepwise-waiting";

/// The path of a Stop at a turn's object, from the route's body: `stop` for none, `{}`, or
/// no `waiting`; `stop?waiting=<id>` for `{"waiting": "<id>"}` (the message that waits as that
/// id, or its turn once begun); `stop?waiting=<id>&withdraw=1` with `"withdraw": true` (that
/// message only while it still waits: a turn of it that has begun is left to run). 422 for any
/// other `waiting` (`null` too: a client that lost the id must not stop the turn another tab
/// waits for), a `withdraw` that is not a boolean or comes without `waiting`, another field, or
/// a body that is not an object.
pub fn stop_path(body: &[u8]) -> AppResult<String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok("stop".to_owned());
    }
    let value: serde_json::Value = crate::platform::body::parse_json(body)?;
    let Some(fields) = value.as_object() else {
        return Err(AppError::invalid_request(
            "a Stop's body is a JSON object: `{}`, or `{\"waiting\": id}`",
        ));
    };
    if let Some(field) = fields
        .keys()
        .find(|f| !matches!(f.as_str(), "waiting" | "withdraw"))
    {
        return Err(AppError::invalid_request(format!(
            "unknown field `{field:.64}`, expected `waiting` or `withdraw`"
        )));
    }
    let withdraw = match fields.get("withdraw") {
        None | Some(serde_json::Value::Bool(false)) => false,
        Some(serde_json::Value::Bool(true)) => true,
        Some(_) => {
            return Err(AppError::invalid_request(
                "invalid field `withdraw`: true or false",
            ));
        }
    };
    match fields.get("waiting") {
        None if withdraw => Err(AppError::invalid_request(
            "`withdraw` takes a waiting message out of the line: name it with `waiting`",
        )),
        None => Ok("stop".to_owned()),
        Some(serde_json::Value::String(waiting)) if ids::is_id(waiting) => {
            let only_waiting = if withdraw { "&withdraw=1" } else { "" };
            Ok(format!("stop?waiting={waiting}{only_waiting}"))
        }
        Some(_) => Err(AppError::invalid_request(
            "invalid field `waiting`: not the id of a waiting message",
        )),
    }
}

/// Waiting messages withdrawn last (their ids, at most [`Withdrawn::REMEMBERED`]), so that a
/// withdrawal sent again (its client's answer was lost) answers as the first did.
#[derive(Default)]
pub struct Withdrawn(RefCell<VecDeque<String>>);

impl Withdrawn {
    /// How many are remembered.
    const REMEMBERED: usize = 16;

    /// Whether the message that waited as `id` was withdrawn lately.
    pub fn has(&self, id: &str) -> bool {
        self.0.borrow().iter().any(|withdrawn| withdrawn == id)
    }

    /// Remembers that the message that waited as `id` was withdrawn (forgetting the oldest).
    pub fn remember(&self, id: &str) {
        let mut withdrawn = self.0.borrow_mut();
        if withdrawn.len() == Self::REMEMBERED {
            withdrawn.pop_front();
        }
        withdrawn.push_back(id.to_owned());
    }
}

//! A running turn's Stop: a flag its owner sets once, and a future the turn races against its
//! next piece of work (a model's next chunk, a pipeline's next effect).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

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

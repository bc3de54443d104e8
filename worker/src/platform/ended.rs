//! The last few turns of a conversation or a help session that ended, kept in their object's
//! memory after a later turn began: a client that was away (a reload, a broken connection, a tab
//! busy with another answer) names its own turn by number and reads it whole, so it learns that
//! the turn failed or was stopped, which nothing stored says, even when it is no longer the last.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// How many ended turns are kept, besides the latest.
pub const KEPT: usize = 4;

/// Ended turns, oldest first, at most [`KEPT`].
pub struct Earlier<T>(RefCell<VecDeque<Rc<T>>>);

impl<T> Default for Earlier<T> {
    fn default() -> Self {
        Earlier(RefCell::new(VecDeque::new()))
    }
}

impl<T> Earlier<T> {
    /// Keeps `turn`, which a later turn replaced; the oldest goes past [`KEPT`].
    pub fn keep(&self, turn: Rc<T>) {
        let mut turns = self.0.borrow_mut();
        turns.push_back(turn);
        while turns.len() > KEPT {
            turns.pop_front();
        }
    }

    /// The kept turn `named` says is the one, if any.
    pub fn find(&self, named: impl Fn(&T) -> bool) -> Option<Rc<T>> {
        self.0.borrow().iter().rev().find(|t| named(t)).cloned()
    }

    /// Forgets them all (their conversation or session was erased).
    pub fn clear(&self) {
        self.0.borrow_mut().clear();
    }
}

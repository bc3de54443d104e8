//! Daily tallies of actions that call no model but reach people, such as a help session handed
//! to a person (the operators' list and their webhook): each counts one on the owner's counter
//! and one on the client network's, and is refused once either has its cap for the UTC day.
//! The counters are the spending guard's ([`Counter`]), under keys of their own.

use crate::dates;

use super::Counter;

/// Counts one action on `counter` at `now_ms`, unless `cap` actions are counted today already
/// (then nothing changes and the answer is `false`). A new day starts from zero.
///
/// ```
/// use stepwise_core::spend::{tally, untally, Counter};
/// let mut owner = Counter::new(0);
/// assert!(tally(&mut owner, 2, 10));
/// assert!(tally(&mut owner, 2, 20));
/// assert!(!tally(&mut owner, 2, 30), "the third of the day is refused");
/// assert_eq!(owner.usage.calls, 2);
/// untally(&mut owner, 40);
/// assert!(tally(&mut owner, 2, 50), "one taken back leaves room for one");
/// let next_day = 24 * 3600 * 1000;
/// assert!(tally(&mut owner, 2, next_day) && owner.usage.calls == 1);
/// ```
pub fn tally(counter: &mut Counter, cap: u64, now_ms: u64) -> bool {
    counter.roll(&dates::day(now_ms));
    if counter.usage.calls >= cap {
        return false;
    }
    counter.usage.calls += 1;
    true
}

/// Takes back one action counted today (the other counter refused it); an earlier day's count
/// is over and stays as it was.
pub fn untally(counter: &mut Counter, now_ms: u64) {
    if counter.day == dates::day(now_ms) {
        counter.usage.calls = counter.usage.calls.saturating_sub(1);
    }
}

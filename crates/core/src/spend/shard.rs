//! What one shard of the spending guard keeps: a counter per owner and per client address, and
//! the blocks of the day's budget it holds, per pool.

use crate::dates;

use super::{Caps, Charge, Grant, QuotaError, Usage};

const DAY_MS: u64 = 24 * 3600 * 1000;

/// One owner's or one address's calls today, and when the key was first counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    /// When the key was first charged (ms since the epoch): owners first seen today draw on
    /// the new owners' pool.
    pub first_seen_ms: u64,
    /// The UTC day `usage` counts (`YYYY-MM-DD`); a later day starts from zero.
    pub day: String,
    /// Calls and tokens of that day.
    pub usage: Usage,
}

impl Counter {
    /// A key seen for the first time at `now_ms`.
    pub fn new(now_ms: u64) -> Counter {
        Counter {
            first_seen_ms: now_ms,
            day: dates::day(now_ms),
            usage: Usage::default(),
        }
    }

    /// The counter as text, `"<first seen> <day> <calls> <tokens>"`.
    ///
    /// ```
    /// use stepwise_core::spend::{Counter, Usage};
    /// let counter = Counter { first_seen_ms: 5, day: "2026-11-26".into(), usage: Usage { calls: 2, tokens: 90 } };
    /// assert_eq!(counter.to_text(), "5 2026-11-26 2 90");
    /// assert_eq!(Counter::parse(&counter.to_text()), Some(counter));
    /// ```
    pub fn to_text(&self) -> String {
        format!(
            "{} {} {} {}",
            self.first_seen_ms, self.day, self.usage.calls, self.usage.tokens
        )
    }

    /// A counter written by [`Counter::to_text`].
    pub fn parse(text: &str) -> Option<Counter> {
        let mut words = text.split_whitespace();
        let counter = Counter {
            first_seen_ms: words.next()?.parse().ok()?,
            day: words.next()?.to_owned(),
            usage: Usage {
                calls: words.next()?.parse().ok()?,
                tokens: words.next()?.parse().ok()?,
            },
        };
        words.next().is_none().then_some(counter)
    }

    /// The usage of the day of `now_ms` (zero when the counter last counted an earlier day).
    pub fn usage_on(&self, now_ms: u64) -> Usage {
        if self.day == dates::day(now_ms) {
            self.usage
        } else {
            Usage::default()
        }
    }

    /// Whether the counter holds nothing worth keeping at `now_ms`: first seen today and no
    /// calls counted today. A charge refused on such a counter does not save it, so that an
    /// identity is remembered, and can age into an established owner, only once a call of it
    /// was counted (a refund keeps it: that identity had one).
    ///
    /// ```
    /// use stepwise_core::spend::Counter;
    /// let mut counter = Counter::new(1_000);
    /// assert!(counter.is_blank(2_000));
    /// counter.usage.calls = 1;
    /// assert!(!counter.is_blank(2_000));
    /// ```
    pub fn is_blank(&self, now_ms: u64) -> bool {
        self.usage_on(now_ms) == Usage::default()
            && dates::day(self.first_seen_ms) == dates::day(now_ms)
    }

    pub(super) fn roll(&mut self, today: &str) {
        if self.day != today {
            self.day = today.to_owned();
            self.usage = Usage::default();
        }
    }
}

/// Which part of the day's budget an owner's calls come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// Owners first seen on an earlier day.
    Established,
    /// Owners first seen today.
    New,
}

impl Pool {
    /// `established` or `new`.
    pub fn name(self) -> &'static str {
        match self {
            Pool::Established => "established",
            Pool::New => "new",
        }
    }

    /// The pool [`Pool::name`] names.
    pub fn parse(name: &str) -> Option<Pool> {
        match name {
            "established" => Some(Pool::Established),
            "new" => Some(Pool::New),
            _ => None,
        }
    }

    /// Whether calls of this pool need leased blocks under `caps` (a pool with no cap over it
    /// spends freely).
    fn leased(self, caps: &Caps) -> bool {
        caps.total.is_some() || (self == Pool::New && caps.new_owners.is_some())
    }
}

/// The calls of the day's budget a shard holds, not yet spent, per pool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Leases {
    /// The UTC day of the blocks; blocks of an earlier day are void.
    pub day: String,
    /// Calls held for established owners.
    pub established: u64,
    /// Calls held for owners first seen today.
    pub new: u64,
    /// Owners' calls this shard counted that day (what its blocks were spent on).
    pub counted: u64,
}

impl Leases {
    /// The leases as text, `"<day> <established> <new> <counted>"`.
    ///
    /// ```
    /// use stepwise_core::spend::Leases;
    /// let leases = Leases { day: "2026-11-26".into(), established: 40, new: 3, counted: 9 };
    /// assert_eq!(Leases::parse(&leases.to_text()), Some(leases));
    /// ```
    pub fn to_text(&self) -> String {
        format!(
            "{} {} {} {}",
            self.day, self.established, self.new, self.counted
        )
    }

    /// Leases written by [`Leases::to_text`].
    pub fn parse(text: &str) -> Option<Leases> {
        let mut words = text.split_whitespace();
        let leases = Leases {
            day: words.next()?.to_owned(),
            established: words.next()?.parse().ok()?,
            new: words.next()?.parse().ok()?,
            counted: words.next()?.parse().ok()?,
        };
        words.next().is_none().then_some(leases)
    }

    /// The calls held for `pool`.
    pub fn held(&self, pool: Pool) -> u64 {
        match pool {
            Pool::Established => self.established,
            Pool::New => self.new,
        }
    }

    fn held_mut(&mut self, pool: Pool) -> &mut u64 {
        match pool {
            Pool::Established => &mut self.established,
            Pool::New => &mut self.new,
        }
    }

    /// The leases as of the day of `now_ms` (an earlier day's are void: none held, none counted).
    pub fn on(&self, now_ms: u64) -> Leases {
        let mut leases = self.clone();
        leases.roll(&dates::day(now_ms));
        leases
    }

    fn roll(&mut self, today: &str) {
        if self.day != today {
            *self = Leases {
                day: today.to_owned(),
                ..Leases::default()
            };
        }
    }
}

/// Whether an owner first seen at `first_seen_ms` counts as established at `now_ms`: first seen
/// on an earlier UTC day, or, when `established_after_ms` is set, at least that long ago.
///
/// ```
/// use stepwise_core::spend::is_established;
/// let day = 24 * 3600 * 1000;
/// assert!(is_established(day - 1, day, None)); // yesterday, a millisecond ago
/// assert!(!is_established(day, 2 * day - 1, None)); // today
/// assert!(is_established(day, day + 5000, Some(5000)));
/// ```
pub fn is_established(first_seen_ms: u64, now_ms: u64, established_after_ms: Option<u64>) -> bool {
    first_seen_ms / DAY_MS < now_ms / DAY_MS
        || established_after_ms.is_some_and(|after| now_ms.saturating_sub(first_seen_ms) >= after)
}

/// What a charge of an owner came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Counted.
    Charged,
    /// The shard holds too few calls of `pool`: lease at least `calls` more from the day's
    /// budget ([`super::Budget::grant`]), then [`settle_owner`]. Nothing was counted.
    NeedLease {
        /// The pool to lease from.
        pool: Pool,
        /// The calls missing.
        calls: u64,
    },
}

/// Charges an owner: refused past the owner's cap (nothing counted); counted when the shard
/// holds enough calls of the owner's pool (or the pool has no cap); otherwise the calls to
/// lease first.
///
/// ```
/// use stepwise_core::spend::{charge_owner, Caps, Charge, Counter, Leases, Pool, Step};
/// let caps = Caps { per_owner: Some(5), total: Some(100), ..Caps::default() };
/// let (mut owner, mut leases) = (Counter::new(0), Leases::default());
/// let one = Charge { calls: 1, tokens: 10 };
/// let step = charge_owner(&mut owner, &mut leases, one, &caps, 0, None).unwrap();
/// assert_eq!(step, Step::NeedLease { pool: Pool::New, calls: 1 });
/// leases.new = 3;
/// assert_eq!(charge_owner(&mut owner, &mut leases, one, &caps, 0, None), Ok(Step::Charged));
/// assert_eq!((owner.usage.calls, leases.new), (1, 2));
/// ```
pub fn charge_owner(
    counter: &mut Counter,
    leases: &mut Leases,
    charge: Charge,
    caps: &Caps,
    now_ms: u64,
    established_after_ms: Option<u64>,
) -> Result<Step, QuotaError> {
    let today = dates::day(now_ms);
    counter.roll(&today);
    leases.roll(&today);
    if let Some(cap) = caps.per_owner
        && counter.usage.calls + charge.calls > cap
    {
        return Err(QuotaError::Owner { cap });
    }
    let pool = pool_of(counter, now_ms, established_after_ms);
    if pool.leased(caps) {
        let held = leases.held_mut(pool);
        if *held < charge.calls {
            return Ok(Step::NeedLease {
                pool,
                calls: charge.calls - *held,
            });
        }
        *held -= charge.calls;
    }
    leases.counted += charge.calls;
    count(counter, charge);
    Ok(Step::Charged)
}

/// Finishes a charge that needed a lease: the grant joins the shard's blocks (unless the day
/// changed meanwhile: its blocks are void), and the charge is tried again without leasing
/// more. Refused with the budget's reason, or the pool's cap when other charges took the
/// grant first; nothing is counted then, and granted calls stay in the shard for later charges.
#[allow(clippy::too_many_arguments)]
pub fn settle_owner(
    counter: &mut Counter,
    leases: &mut Leases,
    charge: Charge,
    caps: &Caps,
    now_ms: u64,
    established_after_ms: Option<u64>,
    asked: (Pool, &str),
    grant: &Grant,
) -> Result<(), QuotaError> {
    let (pool, asked_day) = asked;
    leases.roll(&dates::day(now_ms));
    if leases.day == asked_day {
        *leases.held_mut(pool) += grant.calls;
    }
    match charge_owner(counter, leases, charge, caps, now_ms, established_after_ms)? {
        Step::Charged => Ok(()),
        Step::NeedLease { pool, .. } => Err(grant.refused.clone().unwrap_or(match pool {
            Pool::New if caps.new_owners.is_some() => QuotaError::NewOwners {
                cap: caps.new_owners.unwrap_or(0),
            },
            _ => QuotaError::Total {
                cap: caps.total.unwrap_or(0),
            },
        })),
    }
}

/// Charges a client address: refused past the address's cap, counted otherwise. (Addresses
/// lease nothing: the owner's charge does.)
pub fn charge_address(
    counter: &mut Counter,
    charge: Charge,
    caps: &Caps,
    now_ms: u64,
) -> Result<(), QuotaError> {
    counter.roll(&dates::day(now_ms));
    if let Some(cap) = caps.per_address
        && counter.usage.calls + charge.calls > cap
    {
        return Err(QuotaError::Address { cap });
    }
    count(counter, charge);
    Ok(())
}

/// Gives back a charge whose calls were not made: off the counter and, for an owner (`leases`
/// given), off the shard's count of the day. Returns the calls to give back to the day's budget
/// ([`super::Budget::give_back`]) and their pool, when the pool is leased: a refunded call goes
/// back where it was leased from, so that a charge refused elsewhere (the network's, in
/// parallel) holds nothing back in this shard. A charge of an earlier day is not given back
/// (that day's counts are over).
///
/// ```
/// use stepwise_core::spend::{charge_owner, refund, Caps, Charge, Counter, Leases, Pool, Step};
/// let caps = Caps { total: Some(100), ..Caps::default() };
/// let (mut owner, mut leases) = (Counter::new(0), Leases { new: 5, ..Leases::default() });
/// leases.day = stepwise_core::dates::day(0);
/// let one = Charge { calls: 1, tokens: 0 };
/// assert_eq!(charge_owner(&mut owner, &mut leases, one, &caps, 0, None), Ok(Step::Charged));
/// assert_eq!(refund(&mut owner, Some(&mut leases), one, &caps, 0, None), Some((Pool::New, 1)));
/// assert_eq!((owner.usage.calls, leases.new, leases.counted), (0, 4, 0));
/// ```
pub fn refund(
    counter: &mut Counter,
    leases: Option<&mut Leases>,
    charge: Charge,
    caps: &Caps,
    now_ms: u64,
    established_after_ms: Option<u64>,
) -> Option<(Pool, u64)> {
    let today = dates::day(now_ms);
    if counter.day != today {
        return None;
    }
    // Only what is on the counter goes back: never more calls than were taken.
    let back = charge.calls.min(counter.usage.calls);
    counter.usage.calls -= back;
    counter.usage.tokens = counter.usage.tokens.saturating_sub(charge.tokens);
    let leases = leases?;
    let pool = pool_of(counter, now_ms, established_after_ms);
    leases.roll(&today);
    leases.counted = leases.counted.saturating_sub(back);
    (pool.leased(caps) && back > 0).then_some((pool, back))
}

/// The pool an owner's calls come from at `now_ms`.
fn pool_of(counter: &Counter, now_ms: u64, established_after_ms: Option<u64>) -> Pool {
    if is_established(counter.first_seen_ms, now_ms, established_after_ms) {
        Pool::Established
    } else {
        Pool::New
    }
}

fn count(counter: &mut Counter, charge: Charge) {
    counter.usage.calls += charge.calls;
    counter.usage.tokens += charge.tokens;
}

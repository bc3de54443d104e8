//! The day's budget: the one counter of all owners' calls, which shards lease blocks from.

use super::{Caps, Pool, QuotaError};

/// The largest block of calls a shard is granted at once.
pub const MAX_BLOCK: u64 = 100;

/// The calls of one UTC day granted to shards so far (kept by one object a day).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// All calls granted, of both pools.
    pub granted: u64,
    /// The calls granted to owners first seen today (part of `granted`).
    pub granted_new: u64,
}

/// A budget's answer to a shard: the calls granted (at least the calls asked for, or none), and
/// the cap that refused when none were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Calls now leased to the shard: spent as far as the caps are concerned.
    pub calls: u64,
    /// Why nothing was granted.
    pub refused: Option<QuotaError>,
}

impl Budget {
    /// The budget as text, `"<granted> <granted_new>"` (how its object stores it).
    ///
    /// ```
    /// use stepwise_core::spend::Budget;
    /// let budget = Budget { granted: 12, granted_new: 5 };
    /// assert_eq!(Budget::parse(&budget.to_text()), Some(budget));
    /// ```
    pub fn to_text(&self) -> String {
        format!("{} {}", self.granted, self.granted_new)
    }

    /// A budget written by [`Budget::to_text`].
    pub fn parse(text: &str) -> Option<Budget> {
        let (granted, granted_new) = text.trim().split_once(' ')?;
        Some(Budget {
            granted: granted.parse().ok()?,
            granted_new: granted_new.parse().ok()?,
        })
    }

    /// Takes back `calls` of `pool` a shard was granted and did not spend (a refunded charge).
    ///
    /// ```
    /// use stepwise_core::spend::{Budget, Pool};
    /// let mut budget = Budget { granted: 10, granted_new: 4 };
    /// budget.give_back(Pool::New, 3);
    /// assert_eq!(budget, Budget { granted: 7, granted_new: 1 });
    /// ```
    pub fn give_back(&mut self, pool: Pool, calls: u64) {
        let calls = match pool {
            Pool::New => calls.min(self.granted_new),
            Pool::Established => calls,
        }
        .min(self.granted);
        self.granted -= calls;
        if pool == Pool::New {
            self.granted_new -= calls;
        }
    }

    /// Grants a shard of `shards` at least `wanted` calls of `pool`, or none when fewer are
    /// left. A grant is a block sized to what is left, `left / (2 × shards)` between 1 and
    /// [`MAX_BLOCK`] (never less than `wanted`), so that shards come back seldom while the
    /// budget is large, and the calls held in shards' blocks stay small when it is nearly
    /// spent: the caps are never passed, and at most about half of what is left is ever held
    /// back unused.
    ///
    /// ```
    /// use stepwise_core::spend::{Budget, Caps, Pool};
    /// let caps = Caps { total: Some(1000), new_owners: Some(100), ..Caps::default() };
    /// let mut budget = Budget::default();
    /// assert_eq!(budget.grant(Pool::Established, 1, &caps, 4).calls, 100);
    /// assert_eq!(budget.grant(Pool::New, 1, &caps, 4).calls, 12); // 100 / (2 × 4)
    /// assert_eq!(budget.grant(Pool::New, 90, &caps, 4).refused.unwrap().cap_name(), "new_owners");
    /// assert_eq!(budget, Budget { granted: 112, granted_new: 12 });
    /// ```
    pub fn grant(&mut self, pool: Pool, wanted: u64, caps: &Caps, shards: u32) -> Grant {
        self.grant_sized(pool, wanted, caps, Some(shards))
    }

    /// Grants exactly `wanted` calls of `pool`, or none: what a shard asks for while a block of
    /// its own is already on the way, so that a burst of charges does not lease a block each.
    ///
    /// ```
    /// use stepwise_core::spend::{Budget, Caps, Pool};
    /// let caps = Caps { total: Some(1000), ..Caps::default() };
    /// assert_eq!(Budget::default().grant_exact(Pool::New, 2, &caps).calls, 2);
    /// ```
    pub fn grant_exact(&mut self, pool: Pool, wanted: u64, caps: &Caps) -> Grant {
        self.grant_sized(pool, wanted, caps, None)
    }

    /// A grant of a block sized for `shards`, or of exactly `wanted` calls (`None`).
    fn grant_sized(&mut self, pool: Pool, wanted: u64, caps: &Caps, shards: Option<u32>) -> Grant {
        let total_left = caps.total.map(|cap| cap.saturating_sub(self.granted));
        let new_left = match pool {
            Pool::New => caps
                .new_owners
                .map(|cap| cap.saturating_sub(self.granted_new)),
            Pool::Established => None,
        };
        let left = match (total_left, new_left) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(left) = left
            && left < wanted
        {
            let refused = match (new_left, caps.new_owners) {
                (Some(new), Some(cap)) if new < wanted && new < total_left.unwrap_or(u64::MAX) => {
                    QuotaError::NewOwners { cap }
                }
                _ => QuotaError::Total {
                    cap: caps.total.unwrap_or(0),
                },
            };
            return Grant {
                calls: 0,
                refused: Some(refused),
            };
        }
        let block = match (shards, left) {
            (None, _) => 1,
            (Some(_), None) => MAX_BLOCK,
            (Some(shards), Some(left)) => {
                (left / (2 * u64::from(shards.max(1)))).clamp(1, MAX_BLOCK)
            }
        };
        let calls = block.max(wanted).min(left.unwrap_or(u64::MAX));
        self.granted += calls;
        if pool == Pool::New {
            self.granted_new += calls;
        }
        Grant {
            calls,
            refused: None,
        }
    }
}

//! The day's spending as an operator reads it (`GET /api/spend`): the budget granted, what the
//! shards counted of it and what they still hold, shard by shard.

use serde::Serialize;

use super::{Budget, Caps, Leases};

/// One shard's part of the day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShardReport {
    /// The shard's number (`shard-<n>`).
    pub shard: u32,
    /// Owners' calls the shard counted today.
    pub counted: u64,
    /// Calls leased and not yet spent, for established owners.
    pub held_established: u64,
    /// Calls leased and not yet spent, for owners first seen today.
    pub held_new: u64,
}

/// The day's spending over every shard. `granted` equals `counted + held`: every call the
/// budget gave out was either counted or is still held in a shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpendReport {
    /// The UTC day (`YYYY-MM-DD`).
    pub day: String,
    /// The caps in force.
    pub caps: Caps,
    /// Shards the counters are spread over.
    pub shards: u32,
    /// Calls the day's budget granted to shards (the total cap counts these).
    pub granted: u64,
    /// Of which to owners first seen today.
    pub granted_new: u64,
    /// Owners' calls counted, over all shards.
    pub counted: u64,
    /// Calls held in shards' blocks, not yet spent.
    pub held: u64,
    /// Each shard that counted or holds anything today.
    pub by_shard: Vec<ShardReport>,
}

impl SpendReport {
    /// The report of `day` from its budget and each shard's leases (as of that day).
    ///
    /// ```
    /// use stepwise_core::spend::{Budget, Caps, Leases, SpendReport};
    /// let day = "2026-11-26".to_owned();
    /// let leases = Leases { day: day.clone(), established: 2, new: 1, counted: 4 };
    /// let budget = Budget { granted: 7, granted_new: 3 };
    /// let report = SpendReport::new(day, Caps::default(), 8, budget, vec![(5, leases)]);
    /// assert_eq!((report.counted, report.held), (4, 3));
    /// assert_eq!(report.by_shard[0].shard, 5);
    /// ```
    pub fn new(
        day: String,
        caps: Caps,
        shards: u32,
        budget: Budget,
        leases: Vec<(u32, Leases)>,
    ) -> SpendReport {
        let by_shard: Vec<ShardReport> = leases
            .into_iter()
            .filter(|(_, l)| l.day == day && (l.counted + l.established + l.new) > 0)
            .map(|(shard, l)| ShardReport {
                shard,
                counted: l.counted,
                held_established: l.established,
                held_new: l.new,
            })
            .collect();
        SpendReport {
            counted: by_shard.iter().map(|s| s.counted).sum(),
            held: by_shard
                .iter()
                .map(|s| s.held_established + s.held_new)
                .sum(),
            day,
            caps,
            shards,
            granted: budget.granted,
            granted_new: budget.granted_new,
            by_shard,
        }
    }
}

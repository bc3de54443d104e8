//! The spending guard's rules, with no I/O: model calls and estimated tokens are counted per
//! owner, per client address and in total each UTC day, and a call that would pass a cap is
//! refused before any upstream request.
//!
//! The counters are sharded so that no one object sees every charge: an owner's (or an
//! address's) [`Counter`] lives in one of many shards, chosen by [`shard_of`]. The day's total
//! is a [`Budget`] the shards lease blocks of calls from ([`Leases`]): a leased call counts as
//! spent against the total cap, so the cap is never passed, and blocks shrink as the budget
//! runs out, so little of it is held back unused. Owners first seen today draw on a pool of
//! their own with its own cap ([`Caps::new_owners`]): identities are free to mint, and the part
//! of the budget kept for owners who existed before today cannot be spent by fresh ones.
//! The objects load, apply these functions and save; `tests/vectors/spend.json` replays them.
//! The same counters tally actions that call no model but reach people ([`tally`]: handoffs).

mod address;
mod budget;
mod report;
mod shard;
mod tally;

pub use address::{address_key, shard_of};
pub use budget::{Budget, Grant, MAX_BLOCK};
pub use report::{ShardReport, SpendReport};
pub use shard::{
    Counter, Leases, Pool, Step, charge_address, charge_owner, is_established, refund, settle_owner,
};
pub use tally::{tally, untally};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Calls and estimated tokens counted so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Usage {
    /// Model calls.
    pub calls: u64,
    /// Estimated tokens ([`estimate_tokens`]).
    pub tokens: u64,
}

impl Usage {
    /// The counters as text, `"<calls> <tokens>"` (how the guard stores and answers them).
    ///
    /// ```
    /// use stepwise_core::spend::Usage;
    /// let usage = Usage { calls: 3, tokens: 1200 };
    /// assert_eq!(usage.to_text(), "3 1200");
    /// assert_eq!(Usage::parse("3 1200"), Some(usage));
    /// assert_eq!(Usage::parse("3"), None);
    /// ```
    pub fn to_text(&self) -> String {
        format!("{} {}", self.calls, self.tokens)
    }

    /// Counters written by [`Usage::to_text`].
    pub fn parse(text: &str) -> Option<Usage> {
        let (calls, tokens) = text.trim().split_once(' ')?;
        Some(Usage {
            calls: calls.parse().ok()?,
            tokens: tokens.parse().ok()?,
        })
    }
}

/// What one request is about to spend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charge {
    /// Model calls (a research start counts all of its calls up front).
    pub calls: u64,
    /// Estimated tokens.
    pub tokens: u64,
}

/// The daily caps on model calls (`None`: no cap).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Caps {
    /// `MODEL_CALLS_PER_OWNER_PER_DAY`.
    pub per_owner: Option<u64>,
    /// `MODEL_CALLS_PER_ADDRESS_PER_DAY`: anonymous owners' calls from one client address (an
    /// IPv6 /64 counts as one address: [`address_key`]).
    pub per_address: Option<u64>,
    /// `MODEL_CALLS_PER_DAY`, all owners together.
    pub total: Option<u64>,
    /// `MODEL_CALLS_NEW_OWNERS_PER_DAY`: all owners first seen today together (within the
    /// total); the rest of the total is kept for owners who existed before.
    pub new_owners: Option<u64>,
}

/// Why a charge was refused. Nothing is counted on refusal.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum QuotaError {
    /// The owner's daily cap would be passed.
    #[error("your daily limit of {cap} model calls is reached; it resets at 00:00 UTC")]
    Owner {
        /// The cap.
        cap: u64,
    },
    /// The deployment's daily cap would be passed.
    #[error("this service's daily limit of model calls is reached; it resets at 00:00 UTC")]
    Total {
        /// The cap.
        cap: u64,
    },
    /// The daily cap of the client's address would be passed.
    #[error(
        "the daily limit of {cap} model calls from your network address is reached; it resets at 00:00 UTC"
    )]
    Address {
        /// The cap.
        cap: u64,
    },
    /// The part of the day's calls open to owners first seen today is used up.
    #[error(
        "today's model calls for new visitors are used up; it resets at 00:00 UTC (owners from earlier days are not affected)"
    )]
    NewOwners {
        /// The cap.
        cap: u64,
    },
}

impl QuotaError {
    /// Stable machine code: `quota_exceeded`.
    pub fn code(&self) -> &'static str {
        "quota_exceeded"
    }

    /// Which cap refused: `owner`, `address`, `total` or `new_owners` (how the guard's objects
    /// tell each other, and what the vectors name).
    pub fn cap_name(&self) -> &'static str {
        match self {
            QuotaError::Owner { .. } => "owner",
            QuotaError::Address { .. } => "address",
            QuotaError::Total { .. } => "total",
            QuotaError::NewOwners { .. } => "new_owners",
        }
    }

    /// The error [`QuotaError::cap_name`] names, with its cap.
    pub fn from_cap_name(name: &str, cap: u64) -> Option<QuotaError> {
        Some(match name {
            "owner" => QuotaError::Owner { cap },
            "address" => QuotaError::Address { cap },
            "total" => QuotaError::Total { cap },
            "new_owners" => QuotaError::NewOwners { cap },
            _ => return None,
        })
    }
}

/// Tokens a call is estimated to use: a quarter of the prompt's characters, plus the most it
/// may write.
///
/// ```
/// assert_eq!(stepwise_core::spend::estimate_tokens(4001, 100), 1101);
/// ```
pub fn estimate_tokens(prompt_chars: usize, max_tokens: u32) -> u64 {
    (prompt_chars as u64).div_ceil(4) + u64::from(max_tokens)
}

//! The spending guard's rules, with no I/O: model calls and estimated tokens are counted per
//! owner per UTC day and in total, and a call that would pass a cap is refused before any
//! upstream request. The guard's Durable Object loads the counters, calls [`charge`] or
//! [`refund`], and saves them.

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
pub struct Caps {
    /// `MODEL_CALLS_PER_OWNER_PER_DAY`.
    pub per_owner: Option<u64>,
    /// `MODEL_CALLS_PER_DAY`, all owners together.
    pub total: Option<u64>,
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
}

impl QuotaError {
    /// Stable machine code: `quota_exceeded`.
    pub fn code(&self) -> &'static str {
        "quota_exceeded"
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

/// Counts `charge` against an owner's and the total usage of the day, or refuses it when either
/// cap would be passed (then nothing changes).
///
/// ```
/// use stepwise_core::spend::{charge, Caps, Charge, Usage};
/// let caps = Caps { per_owner: Some(3), total: None };
/// let (mut mine, mut all) = (Usage::default(), Usage::default());
/// let one = Charge { calls: 1, tokens: 10 };
/// for _ in 0..3 { charge(&mut mine, &mut all, one, &caps).unwrap(); }
/// assert_eq!(charge(&mut mine, &mut all, one, &caps).unwrap_err().code(), "quota_exceeded");
/// assert_eq!((mine.calls, all.tokens), (3, 30));
/// ```
pub fn charge(
    owner: &mut Usage,
    total: &mut Usage,
    charge: Charge,
    caps: &Caps,
) -> Result<(), QuotaError> {
    if let Some(cap) = caps.per_owner
        && owner.calls + charge.calls > cap
    {
        return Err(QuotaError::Owner { cap });
    }
    if let Some(cap) = caps.total
        && total.calls + charge.calls > cap
    {
        return Err(QuotaError::Total { cap });
    }
    for usage in [owner, total] {
        usage.calls += charge.calls;
        usage.tokens += charge.tokens;
    }
    Ok(())
}

/// Gives back a charge whose calls were not made (the command it paid for was refused).
pub fn refund(owner: &mut Usage, total: &mut Usage, charge: Charge) {
    for usage in [owner, total] {
        usage.calls = usage.calls.saturating_sub(charge.calls);
        usage.tokens = usage.tokens.saturating_sub(charge.tokens);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_cap_binds_every_owner_and_a_refusal_counts_nothing() {
        let caps = Caps {
            per_owner: Some(10),
            total: Some(4),
        };
        let (mut a, mut b, mut all) = (Usage::default(), Usage::default(), Usage::default());
        let three = Charge {
            calls: 3,
            tokens: 30,
        };
        charge(&mut a, &mut all, three, &caps).unwrap();
        let refused = charge(&mut b, &mut all, three, &caps).unwrap_err();
        assert_eq!(refused, QuotaError::Total { cap: 4 });
        assert_eq!((b, all.calls), (Usage::default(), 3));
        refund(&mut a, &mut all, three);
        assert_eq!((a, all), (Usage::default(), Usage::default()));
        charge(&mut b, &mut all, three, &caps).unwrap();
    }
}

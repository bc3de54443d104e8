//! One lifecycle for what a turn waits on (issue 30): a tool call held for the owner's approval,
//! a context request, a help-desk clarifying question. An interrupt is opened by a turn, may have
//! a deadline with a reminder half way to it, and is resolved once: approved, denied (with a
//! reason), supplied, skipped, answered, forced, or expired at its deadline. Sans-IO: times are
//! given, nothing is stored here.
//!
//! Each kind allows its own resolutions ([`InterruptKind::allows`]). The deadline is hard for an
//! approval (a decision after it is refused: the approval expired) and soft for a context request
//! (supplies are taken until its fallback has run, which the conversation starts from its alarm,
//! and not while a turn runs). Only a context request opens again, when the turn it resumed
//! failed before answering. A clarifying question has no deadline.
//!
//! The records that wait keep their own stored fields (so stored conversations and the wire stay
//! as they were) and make every transition through this machine ([`Interruptible::through`]);
//! clients read them all in one shape, [`Interrupt`].
//!
//! ```
//! use stepwise_core::interrupt::{InterruptKind, Lifecycle, Resolution};
//! let mut approval = Lifecycle::open(InterruptKind::Approval, 1_000, Some(600));
//! assert_eq!(approval.next_wake(), Some(1_300));
//! assert!(approval.remind_if_due(1_300));
//! approval.resolve(Resolution::Approved, "ada@example.com", None, 1_400).unwrap();
//! let again = approval.resolve(Resolution::Denied, "ada@example.com", None, 1_401);
//! assert_eq!(again.unwrap_err().code(), "interrupt_settled");
//! ```

mod view;

pub use view::{Interrupt, InterruptState, Interruptible};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Who resolves an interrupt at its deadline.
pub const SYSTEM: &str = "system";

/// What a turn waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum InterruptKind {
    /// A tool call held for the owner's approval.
    Approval,
    /// Context the turn asked for before it answers.
    ContextRequest,
    /// A help-desk clarifying question.
    Question,
}

impl InterruptKind {
    /// The kind as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            InterruptKind::Approval => "approval",
            InterruptKind::ContextRequest => "context_request",
            InterruptKind::Question => "question",
        }
    }

    /// Whether a person (or the system, for a context request's own supplies) may resolve an
    /// interrupt of this kind as `resolution`. `Expired` is never chosen: only the deadline
    /// gives it ([`Lifecycle::expire_if_due`]).
    pub fn allows(self, resolution: Resolution) -> bool {
        use Resolution::*;
        matches!(
            (self, resolution),
            (InterruptKind::Approval, Approved | Denied)
                | (InterruptKind::ContextRequest, Supplied | Skipped | Forced)
                | (InterruptKind::Question, Answered | Skipped)
        )
    }

    /// Whether a resolution after the deadline is refused (an approval), rather than taken until
    /// the fallback has run (a context request).
    pub fn hard_deadline(self) -> bool {
        self == InterruptKind::Approval
    }

    /// Whether a resolved interrupt of this kind may open again (a context request whose
    /// resumed turn failed before it answered).
    pub fn reopens(self) -> bool {
        self == InterruptKind::ContextRequest
    }
}

/// How an interrupt was resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The held call may run (once).
    Approved,
    /// The held call will not run; the reason goes back to the model.
    Denied,
    /// What was asked for was given (by the user, or by the system from the owner's data).
    Supplied,
    /// The user chose to go on without it.
    Skipped,
    /// The question got its answer.
    Answered,
    /// The user chose "Run without context" before everything required was given.
    Forced,
    /// The deadline passed first: an approval is denied, a context request's turn runs
    /// without what is missing.
    Expired,
}

impl Resolution {
    /// The resolution as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Approved => "approved",
            Resolution::Denied => "denied",
            Resolution::Supplied => "supplied",
            Resolution::Skipped => "skipped",
            Resolution::Answered => "answered",
            Resolution::Forced => "forced",
            Resolution::Expired => "expired",
        }
    }
}

/// A resolution with who made it and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Resolved {
    /// How.
    pub resolution: Resolution,
    /// When (ms since the epoch).
    pub at: u64,
    /// Who: the owner's email or `owner`, `user`, or [`SYSTEM`] at a deadline.
    pub by: String,
    /// Why (a denial's reason; `expired` at a deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Where an interrupt stands: the state every transition goes through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Lifecycle {
    /// What it waits on.
    pub kind: InterruptKind,
    /// When the turn opened it (ms since the epoch).
    pub opened_at: u64,
    /// When it expires unresolved, if it ever does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
    /// Half its time has passed and the owner was reminded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reminded: bool,
    /// How it was resolved (`None` while open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolved>,
}

/// Why a transition was refused; the lifecycle is unchanged (except that a resolution refused
/// because the hard deadline passed leaves it expired, which is what it is).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InterruptError {
    /// It was resolved already; it is resolved once.
    #[error("this is {} already; it is resolved once", .0.as_str())]
    Settled(Resolution),
    /// Its deadline passed before the resolution came.
    #[error("this expired before it was answered")]
    Expired,
    /// The resolution is not one of its kind's.
    #[error("a {} cannot be {}", .kind.as_str(), .resolution.as_str())]
    NotAllowed {
        /// Its kind.
        kind: InterruptKind,
        /// The resolution asked for.
        resolution: Resolution,
    },
    /// It is open, or of a kind that never opens again.
    #[error("this cannot open again")]
    NotReopenable,
}

impl InterruptError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            InterruptError::Settled(_) => "interrupt_settled",
            InterruptError::Expired => "interrupt_expired",
            InterruptError::NotAllowed { .. } => "invalid_resolution",
            InterruptError::NotReopenable => "interrupt_not_reopenable",
        }
    }
}

impl Lifecycle {
    /// An interrupt of `kind` opened at `now`, expiring `ttl_ms` later (`None`: never).
    pub fn open(kind: InterruptKind, now: u64, ttl_ms: Option<u64>) -> Lifecycle {
        Lifecycle {
            kind,
            opened_at: now,
            deadline: ttl_ms.map(|ttl| now.saturating_add(ttl)),
            reminded: false,
            resolved: None,
        }
    }

    /// Whether it still waits.
    pub fn is_open(&self) -> bool {
        self.resolved.is_none()
    }

    /// How it was resolved, if it was.
    pub fn resolution(&self) -> Option<Resolution> {
        self.resolved.as_ref().map(|r| r.resolution)
    }

    /// When the owner is reminded: half way to the deadline (`None` without one).
    pub fn reminder_at(&self) -> Option<u64> {
        let deadline = self.deadline?;
        Some(self.opened_at + deadline.saturating_sub(self.opened_at) / 2)
    }

    /// When it next needs the alarm: its reminder, then its deadline, while open.
    pub fn next_wake(&self) -> Option<u64> {
        match (self.is_open(), self.reminded) {
            (false, _) => None,
            (true, false) => self.reminder_at(),
            (true, true) => self.deadline,
        }
    }

    /// Marks it reminded when half its time has passed and it still waits; whether it did.
    pub fn remind_if_due(&mut self, now: u64) -> bool {
        let due = self.reminder_at().is_some_and(|at| now >= at);
        if !self.is_open() || self.reminded || !due {
            return false;
        }
        self.reminded = true;
        true
    }

    /// Expires it (by [`SYSTEM`], reason `expired`) when its deadline has passed unresolved;
    /// whether it did.
    pub fn expire_if_due(&mut self, now: u64) -> bool {
        if self.deadline.is_none_or(|deadline| now < deadline) {
            return false;
        }
        self.expire(now)
    }

    /// Expires it now, whatever its deadline, if it is open (a fallback judged by the caller);
    /// whether it did.
    pub fn expire(&mut self, now: u64) -> bool {
        if !self.is_open() {
            return false;
        }
        self.resolved = Some(Resolved {
            resolution: Resolution::Expired,
            at: now,
            by: SYSTEM.to_owned(),
            reason: Some("expired".to_owned()),
        });
        true
    }

    /// Resolves it as `resolution`, by `by`, with `reason`, at `now`: refused when its kind does
    /// not allow that resolution, when it was resolved already (exactly once), or, for a kind
    /// with a hard deadline, when the deadline has passed (it is then expired).
    pub fn resolve(
        &mut self,
        resolution: Resolution,
        by: &str,
        reason: Option<&str>,
        now: u64,
    ) -> Result<(), InterruptError> {
        if !self.kind.allows(resolution) {
            return Err(InterruptError::NotAllowed {
                kind: self.kind,
                resolution,
            });
        }
        self.resolvable(now)?;
        self.resolved = Some(Resolved {
            resolution,
            at: now,
            by: by.to_owned(),
            reason: reason.map(str::to_owned),
        });
        Ok(())
    }

    /// Whether it can be resolved at `now`: open, and before its deadline when that is hard
    /// (past it, it is expired now and the answer is [`InterruptError::Expired`]).
    fn resolvable(&mut self, now: u64) -> Result<(), InterruptError> {
        if self.kind.hard_deadline() && self.expire_if_due(now) {
            return Err(InterruptError::Expired);
        }
        match self.resolution() {
            None => Ok(()),
            Some(Resolution::Expired) => Err(InterruptError::Expired),
            Some(settled) => Err(InterruptError::Settled(settled)),
        }
    }

    /// Opens it again (its kind must allow it, and it must be resolved): what it waits on can
    /// be given again, and its deadline applies once more.
    pub fn reopen(&mut self) -> Result<(), InterruptError> {
        if !self.kind.reopens() || self.is_open() {
            return Err(InterruptError::NotReopenable);
        }
        self.resolved = None;
        Ok(())
    }
}

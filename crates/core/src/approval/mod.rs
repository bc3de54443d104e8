//! Asking before a tool with side effects runs: a tool's registry entry says whether its calls
//! need the owner's approval ([`ApprovalPolicy`]); the agent loop holds such a call instead of
//! running it, and the turn ends with an [`Approval`] on its answer. The approval is stored with
//! the conversation and resolved once: approved (with the arguments as proposed or edited,
//! checked against the tool's schema), denied with a reason the model reads, or expired at its
//! deadline. An approved call is recorded as approved before it runs, so it never runs twice:
//! not on a retried request, a second tab's click or a resumed turn. Sans-IO: times are given.

mod describe;

pub use describe::{complete_arguments, describe, describe_named, estimated_calls, stream_changes};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::interrupt::{
    InterruptError, InterruptKind, Interruptible, Lifecycle, Resolution, Resolved, SYSTEM,
};
use crate::json::check_schema;

/// Longest reason of a denial, in characters.
pub const MAX_REASON_CHARS: usize = 500;
/// Longest tool result kept on an approval, in characters.
pub const MAX_RESULT_CHARS: usize = 2_000;
/// Default time an approval waits for the owner before it expires, in ms (10 minutes).
pub const DEFAULT_APPROVAL_TTL_MS: u64 = 600_000;

/// When a tool's calls need the owner's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Never: the call runs at once (the default).
    #[default]
    Never,
    /// Always.
    Always,
    /// When its estimated model calls exceed the tool's `approval_threshold`.
    OverCost,
}

impl ApprovalPolicy {
    /// The policy as written in registries.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Never => "never",
            ApprovalPolicy::Always => "always",
            ApprovalPolicy::OverCost => "over_cost",
        }
    }

    /// The policy written `text`, if it is one.
    pub fn parse(text: &str) -> Option<ApprovalPolicy> {
        [
            ApprovalPolicy::Never,
            ApprovalPolicy::Always,
            ApprovalPolicy::OverCost,
        ]
        .into_iter()
        .find(|p| p.as_str() == text)
    }

    /// Whether a call estimated at `calls` model calls needs approval, past `threshold`.
    ///
    /// ```
    /// use stepwise_core::approval::ApprovalPolicy;
    /// assert!(ApprovalPolicy::Always.requires(0, 5));
    /// assert!(!ApprovalPolicy::OverCost.requires(2, 2));
    /// assert!(ApprovalPolicy::OverCost.requires(3, 2));
    /// ```
    pub fn requires(self, calls: u32, threshold: u32) -> bool {
        match self {
            ApprovalPolicy::Never => false,
            ApprovalPolicy::Always => true,
            ApprovalPolicy::OverCost => calls > threshold,
        }
    }
}

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    /// Waiting for the owner.
    Pending,
    /// Approved: the call ran (or runs) once, in the turn the approval began.
    Approved,
    /// Denied, with a reason the model reads.
    Denied,
    /// Nobody answered before its deadline (denied, reason `expired`).
    Expired,
}

impl ApprovalState {
    /// The state as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Denied => "denied",
            ApprovalState::Expired => "expired",
        }
    }
}

/// What the approved call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApprovalResult {
    /// The tool's text for the model, cut to [`MAX_RESULT_CHARS`].
    pub output: String,
    /// The call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// A tool call held for the owner's approval, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Approval {
    /// Its id (set when the turn that proposed it stores it).
    pub id: String,
    /// The tool.
    pub tool: String,
    /// The model's call id.
    pub call_id: String,
    /// The arguments as proposed (defaults filled in, so the owner sees what would run).
    pub arguments: Value,
    /// What the call will do, in a sentence.
    pub summary: String,
    /// Model calls the call is estimated to make.
    pub estimated_calls: u32,
    /// When it was asked (ms since the epoch).
    pub requested_at: u64,
    /// When it expires unanswered (ms since the epoch).
    pub expires_at: u64,
    /// Where it stands.
    pub state: ApprovalState,
    /// Half its time has passed and the owner was reminded (the watching tabs were told).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reminded: bool,
    /// When it was decided (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<u64>,
    /// Who decided (the owner's email, or `owner`; `system` for an expiry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The arguments the owner approved, when they edited them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_arguments: Option<Value>,
    /// Why it was denied (`expired` for an expiry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the approved call returned, once it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ApprovalResult>,
}

/// Why a decision was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ApprovalError {
    /// No approval of that id in the conversation.
    #[error("there is no approval of that id in this conversation")]
    NotFound,
    /// It was decided already (approved, denied or expired).
    #[error("this approval is {0} already; it is decided once")]
    Settled(&'static str),
    /// Its deadline passed.
    #[error("this approval expired before it was answered")]
    Expired,
    /// Edited arguments that fail the tool's schema.
    #[error("the edited arguments are not valid: {0}")]
    InvalidArguments(String),
    /// A denial's reason is too long.
    #[error("the reason is longer than {MAX_REASON_CHARS} characters")]
    ReasonTooLong,
}

impl ApprovalError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            ApprovalError::NotFound => "approval_not_found",
            ApprovalError::Settled(_) => "approval_settled",
            ApprovalError::Expired => "approval_expired",
            ApprovalError::InvalidArguments(_) => "invalid_arguments",
            ApprovalError::ReasonTooLong => "invalid_request",
        }
    }
}

impl From<InterruptError> for ApprovalError {
    fn from(error: InterruptError) -> Self {
        match error {
            InterruptError::Expired => ApprovalError::Expired,
            InterruptError::Settled(how) => ApprovalError::Settled(how.as_str()),
            // An approval is only ever approved or denied here, and never reopened.
            InterruptError::NotAllowed { .. } | InterruptError::NotReopenable => {
                ApprovalError::Settled("not open")
            }
        }
    }
}

/// An approval reads its stored fields as the shared lifecycle: pending is open; approved,
/// denied and expired are its resolutions.
impl Interruptible for Approval {
    fn interrupt_id(&self) -> &str {
        &self.id
    }

    fn summary(&self) -> String {
        self.summary.clone()
    }

    fn lifecycle(&self) -> Lifecycle {
        let resolution = match self.state {
            ApprovalState::Pending => None,
            ApprovalState::Approved => Some(Resolution::Approved),
            ApprovalState::Denied => Some(Resolution::Denied),
            ApprovalState::Expired => Some(Resolution::Expired),
        };
        Lifecycle {
            kind: InterruptKind::Approval,
            opened_at: self.requested_at,
            deadline: Some(self.expires_at),
            reminded: self.reminded,
            resolved: resolution.map(|resolution| Resolved {
                resolution,
                at: self.decided_at.unwrap_or(self.requested_at),
                by: self.decided_by.clone().unwrap_or_else(|| SYSTEM.to_owned()),
                reason: self.reason.clone(),
            }),
        }
    }

    fn keep(&mut self, lifecycle: &Lifecycle) {
        self.requested_at = lifecycle.opened_at;
        self.expires_at = lifecycle.deadline.unwrap_or(u64::MAX);
        self.reminded = lifecycle.reminded;
        let resolved = lifecycle.resolved.as_ref();
        self.state = match resolved.map(|r| r.resolution) {
            None => ApprovalState::Pending,
            Some(Resolution::Approved) => ApprovalState::Approved,
            Some(Resolution::Expired) => ApprovalState::Expired,
            // The lifecycle allows an approval no other resolution.
            Some(_) => ApprovalState::Denied,
        };
        self.decided_at = resolved.map(|r| r.at);
        self.decided_by = resolved.map(|r| r.by.clone());
        self.reason = resolved.and_then(|r| r.reason.clone());
    }
}

impl Approval {
    /// A held call, not yet issued (no id, no times).
    pub fn proposed(tool: &str, call_id: &str, arguments: Value, estimated_calls: u32) -> Self {
        Approval {
            id: String::new(),
            tool: tool.to_owned(),
            call_id: call_id.to_owned(),
            summary: describe(tool, &arguments),
            arguments,
            estimated_calls,
            requested_at: 0,
            expires_at: 0,
            state: ApprovalState::Pending,
            reminded: false,
            decided_at: None,
            decided_by: None,
            edited_arguments: None,
            reason: None,
            result: None,
        }
    }

    /// Gives the held call its id and deadline (`ttl_ms` from `now`): its interrupt opens.
    pub fn issue(&mut self, id: &str, now: u64, ttl_ms: u64) {
        self.id = id.to_owned();
        self.keep(&Lifecycle::open(InterruptKind::Approval, now, Some(ttl_ms)));
    }

    /// The arguments the call runs with: the edited ones, else those proposed.
    pub fn arguments_to_run(&self) -> &Value {
        self.edited_arguments.as_ref().unwrap_or(&self.arguments)
    }

    /// Whether it waits for the owner.
    pub fn is_pending(&self) -> bool {
        self.state == ApprovalState::Pending
    }

    /// When the owner is reminded: half way to its deadline.
    pub fn reminder_at(&self) -> u64 {
        self.lifecycle().reminder_at().unwrap_or(self.expires_at)
    }

    /// When it next needs the alarm while pending: its reminder, then its deadline.
    pub fn next_wake(&self) -> Option<u64> {
        self.lifecycle().next_wake()
    }

    /// Marks it reminded when half its time has passed and it still waits; whether it did.
    pub fn remind_if_due(&mut self, now: u64) -> bool {
        self.through(|l| l.remind_if_due(now))
    }

    /// Expires it when its deadline has passed unanswered; whether it did.
    pub fn expire_if_due(&mut self, now: u64) -> bool {
        self.through(|l| l.expire_if_due(now))
    }

    /// Checks arguments the owner `edited` against the tool's `schema` (the same arguments as
    /// proposed are no edit, and pass). Changes nothing.
    pub fn check_edit(&self, edited: Option<&Value>, schema: &Value) -> Result<(), ApprovalError> {
        match edited.filter(|args| *args != &self.arguments) {
            Some(args) => check_schema(args, schema)
                .map_err(|why| ApprovalError::InvalidArguments(why.to_string())),
            None => Ok(()),
        }
    }

    /// Approves it, with `edited` arguments when the owner changed them (checked by the caller
    /// with [`Approval::check_edit`]). Refused unless pending and before its deadline (past it,
    /// the approval is left expired).
    pub fn approve(
        &mut self,
        edited: Option<&Value>,
        by: &str,
        now: u64,
    ) -> Result<(), ApprovalError> {
        let edited = edited.filter(|args| *args != &self.arguments).cloned();
        self.through(|l| l.resolve(Resolution::Approved, by, None, now))?;
        self.edited_arguments = edited;
        Ok(())
    }

    /// Denies it with `reason` (trimmed; "no reason given" when blank).
    pub fn deny(&mut self, reason: &str, by: &str, now: u64) -> Result<(), ApprovalError> {
        let reason = reason.trim();
        if reason.chars().count() > MAX_REASON_CHARS {
            return Err(ApprovalError::ReasonTooLong);
        }
        let reason = if reason.is_empty() {
            "no reason given"
        } else {
            reason
        };
        self.through(|l| l.resolve(Resolution::Denied, by, Some(reason), now))?;
        Ok(())
    }

    /// Keeps what the approved call returned (once; cut to [`MAX_RESULT_CHARS`]).
    pub fn record_result(&mut self, output: &str, is_error: bool) -> Result<(), ApprovalError> {
        if self.state != ApprovalState::Approved {
            return Err(ApprovalError::Settled(self.state.as_str()));
        }
        if self.result.is_some() {
            return Err(ApprovalError::Settled("run"));
        }
        let mut kept: String = output.chars().take(MAX_RESULT_CHARS).collect();
        if kept.len() < output.len() {
            kept.push_str(" […]");
        }
        let output = kept;
        self.result = Some(ApprovalResult { output, is_error });
        Ok(())
    }

    /// One line for the model's history: what was proposed and what became of it.
    pub fn history_line(&self) -> String {
        let what = format!("(proposed `{}`: {})", self.tool, self.summary);
        let outcome = match self.state {
            ApprovalState::Pending => "waiting for the user's approval; it has not run".to_owned(),
            ApprovalState::Approved => match &self.result {
                Some(r) if r.is_error => format!("approved by the user; it failed: {}", r.output),
                Some(_) => "approved by the user; it ran".to_owned(),
                None => "approved by the user".to_owned(),
            },
            ApprovalState::Denied => format!(
                "denied by the user, who said: {}",
                self.reason.as_deref().unwrap_or("no reason given")
            ),
            ApprovalState::Expired => "nobody approved it in time; it did not run".to_owned(),
        };
        format!("{what} {outcome}")
    }
}

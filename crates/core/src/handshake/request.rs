//! A context request and its supplies (context-handshake.md §4.1): the slots a deferred turn
//! needs, each supplied (by the system from the owner's artifacts, or by the user), skipped, or
//! still open; the request resolves once every required slot is met, or is forced, or falls
//! back at its SLA. Pure data and transitions; the conversation keeps them.

use serde::{Deserialize, Serialize};

use super::artifacts::{DEFAULT_SLICE_CHARS, MAX_SLICE_CHARS};
use crate::interrupt::{InterruptKind, Interruptible, Lifecycle, Resolution, Resolved, SYSTEM};

/// Most slots one request may have.
pub const MAX_SLOTS: usize = 8;
/// Most suggested snippets a slot offers.
pub const MAX_SUGGESTIONS: usize = 4;
/// Longest slot description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 300;
/// Longest text a user may supply for one slot, in characters.
pub const MAX_SUPPLY_CHARS: usize = MAX_SLICE_CHARS;
/// Default SLA: how long a request waits before the turn runs without it, in ms.
pub const DEFAULT_SLA_MS: u64 = 5 * 60 * 1000;

/// Must the slot be met before the turn runs?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Urgency {
    /// The answer needs it.
    Required,
    /// Nice to have; never holds the turn.
    Optional,
}

/// Who supplied a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Supplier {
    /// The system, from the owner's own artifacts.
    System,
    /// The owner, in the app.
    User,
}

/// What was given for a slot, with its provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Supply {
    /// Who gave it.
    pub by: Supplier,
    /// When (ms since the epoch).
    pub at: u64,
    /// The artifact it came from, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_path: Option<String>,
    /// The text, redacted and within the slot's limit.
    pub text: String,
    /// Whether the text was cut to the limit.
    #[serde(default)]
    pub truncated: bool,
}

/// A snippet offered for a slot, one click to attach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Suggestion {
    /// Where it comes from.
    pub key_path: String,
    /// A label for people.
    pub title: String,
    /// Its opening, redacted.
    pub excerpt: String,
    /// Offset of the excerpt in the artifact, in characters.
    pub start: usize,
    /// End of the excerpt, in characters.
    pub end: usize,
}

/// Where a slot stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SlotState {
    /// Waiting for a supply.
    Open,
    /// Supplied.
    Supplied,
    /// Skipped by the user.
    Skipped,
}

/// One thing a turn needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Slot {
    /// The slot's name within its request (`s1`, `s2`...).
    pub slot: String,
    /// The phase of what it needs, 0 to 4.
    pub phase: u8,
    /// What it needs (`points_of_interest`, `llm_result`, `note`...).
    pub artifact_type: String,
    /// Where the system would find it; `None` when only the user can give it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_path: Option<String>,
    /// Most characters taken.
    pub size_limit: usize,
    /// Required or optional.
    pub urgency: Urgency,
    /// What and why, for people.
    pub description: String,
    /// Snippets to attach with one click.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    /// Where it stands.
    pub state: SlotState,
    /// What was supplied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supply: Option<Supply>,
}

impl Slot {
    /// An open slot, its limit clamped to 1..=[`MAX_SLICE_CHARS`] (0 takes the default) and
    /// its description cut to [`MAX_DESCRIPTION_CHARS`].
    pub fn open(
        slot: String,
        phase: u8,
        artifact_type: &str,
        key_path: Option<String>,
        size_limit: usize,
        urgency: Urgency,
        description: &str,
    ) -> Slot {
        let size_limit = match size_limit {
            0 => DEFAULT_SLICE_CHARS,
            n => n.min(MAX_SLICE_CHARS),
        };
        Slot {
            slot,
            phase: phase.min(4),
            artifact_type: artifact_type.to_owned(),
            key_path,
            size_limit,
            urgency,
            description: description.chars().take(MAX_DESCRIPTION_CHARS).collect(),
            suggestions: Vec::new(),
            state: SlotState::Open,
            supply: None,
        }
    }

    /// Whether it no longer holds the turn.
    pub fn met(&self) -> bool {
        self.state != SlotState::Open || self.urgency == Urgency::Optional
    }
}

/// Who asked for the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The core's `ContextNeedsAnalyzer`, before the model call.
    Analyzer,
    /// The model, with a `CONTEXT_REQUEST:` marker.
    Model,
}

/// How a request ended, or that it has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    /// Waiting for supplies.
    Open,
    /// Every required slot was met (the turn ran with them).
    Resolved,
    /// The user chose "Run without context".
    Forced,
    /// The SLA passed; the turn ran without what was missing.
    FellBack,
}

/// How an ended request was met, as telemetry counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Resolved with what the system supplied alone.
    Auto,
    /// Resolved with at least one supply of the user's.
    User,
    /// Resolved with slots the user skipped and nothing the user supplied.
    Skipped,
    /// The SLA passed.
    FellBack,
    /// "Run without context".
    Forced,
}

impl Outcome {
    /// Its stored name (`auto`, `user`, `skipped`, `fallback`, `forced`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Auto => "auto",
            Outcome::User => "user",
            Outcome::Skipped => "skipped",
            Outcome::FellBack => "fallback",
            Outcome::Forced => "forced",
        }
    }
}

/// A context request of one user message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextRequest {
    /// Its id.
    pub request_id: String,
    /// The user message it holds back.
    pub user_message_id: String,
    /// Who asked.
    pub origin: Origin,
    /// When (ms since the epoch).
    pub created_at: u64,
    /// How long it waits before the turn runs without it, in ms.
    pub sla_ms: u64,
    /// The reminder at half the SLA was sent.
    #[serde(default)]
    pub reminded: bool,
    /// Where it stands.
    pub status: RequestStatus,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<u64>,
    /// What it needs.
    pub slots: Vec<Slot>,
}

/// Why a supply, skip or force was refused; the request is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SupplyError {
    /// No slot of that name.
    #[error("the request has no slot `{0:.32}`")]
    UnknownSlot(String),
    /// The request has ended.
    #[error("the request is no longer open")]
    Closed,
    /// The text is empty or too long.
    #[error("{0}")]
    Invalid(String),
}

impl SupplyError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            SupplyError::UnknownSlot(_) => "unknown_slot",
            SupplyError::Closed => "request_closed",
            SupplyError::Invalid(_) => "invalid_supply",
        }
    }
}

impl ContextRequest {
    /// When the reminder is due (half the SLA).
    pub fn reminder_at(&self) -> u64 {
        self.lifecycle()
            .reminder_at()
            .unwrap_or_else(|| self.deadline())
    }

    /// When the turn runs without what is missing.
    pub fn deadline(&self) -> u64 {
        self.created_at.saturating_add(self.sla_ms)
    }

    /// Marks it reminded when half its SLA has passed and it is still open; whether it did.
    pub fn remind_if_due(&mut self, now: u64) -> bool {
        self.through(|l| l.remind_if_due(now))
    }

    /// Ends it as fallen back when its SLA has passed and it is still open; whether it did.
    pub fn expire_if_due(&mut self, now: u64) -> bool {
        self.through(|l| l.expire_if_due(now))
    }

    /// Whether every required slot is met.
    pub fn ready(&self) -> bool {
        self.slots.iter().all(Slot::met)
    }

    /// Whether it still waits.
    pub fn is_open(&self) -> bool {
        self.status == RequestStatus::Open
    }

    /// Supplies `slot` (a later supply replaces an earlier one).
    pub fn supply(&mut self, slot: &str, supply: Supply) -> Result<(), SupplyError> {
        if supply.text.trim().is_empty() {
            return Err(SupplyError::Invalid(format!(
                "the supply for `{slot}` is empty"
            )));
        }
        let target = self.open_slot(slot)?;
        if supply.text.chars().count() > target.size_limit {
            return Err(SupplyError::Invalid(format!(
                "the supply for `{slot}` is longer than its limit of {} characters",
                target.size_limit
            )));
        }
        target.state = SlotState::Supplied;
        target.supply = Some(supply);
        Ok(())
    }

    /// Skips `slot`: the turn runs without it.
    pub fn skip(&mut self, slot: &str) -> Result<(), SupplyError> {
        let target = self.open_slot(slot)?;
        target.state = SlotState::Skipped;
        target.supply = None;
        Ok(())
    }

    /// How the request ended; `None` while it is open. A slot the user skipped is not a supply
    /// of the system's: a request met that way counts as skipped, not fulfilled automatically.
    pub fn outcome(&self) -> Option<Outcome> {
        Some(match self.status {
            RequestStatus::Open => return None,
            RequestStatus::FellBack => Outcome::FellBack,
            RequestStatus::Forced => Outcome::Forced,
            RequestStatus::Resolved => {
                let by_user = self.attachments().any(|(_, s)| s.by == Supplier::User);
                if by_user {
                    Outcome::User
                } else if self.slots.iter().any(|s| s.state == SlotState::Skipped) {
                    Outcome::Skipped
                } else {
                    Outcome::Auto
                }
            }
        })
    }

    /// Ends the request with `status` at `now`, through the shared lifecycle: a request that
    /// ended already stays as it ended (it is resolved once), and `Open` changes nothing.
    /// Whether it ended now.
    pub fn close(&mut self, status: RequestStatus, now: u64) -> bool {
        let (resolution, by) = match status {
            RequestStatus::Open => return false,
            RequestStatus::FellBack => return self.through(|l| l.expire(now)),
            RequestStatus::Forced => (Resolution::Forced, "user"),
            RequestStatus::Resolved => self.met_as(),
        };
        self.through(|l| l.resolve(resolution, by, None, now))
            .is_ok()
    }

    /// Opens an ended request again (its resumed turn failed before it answered): its supplies
    /// can be sent again, and its deadline's fallback applies once more.
    pub fn reopen(&mut self) {
        // An open request stays as it is.
        let _ = self.through(|l| l.reopen());
    }

    /// How a request whose required slots are met resolves, and by whom: supplied (by the user
    /// when any supply is the user's, else by the system), or skipped when the user skipped
    /// slots and supplied nothing (as [`ContextRequest::outcome`] counts it).
    fn met_as(&self) -> (Resolution, &'static str) {
        if self.attachments().any(|(_, s)| s.by == Supplier::User) {
            (Resolution::Supplied, "user")
        } else if self.slots.iter().any(|s| s.state == SlotState::Skipped) {
            (Resolution::Skipped, "user")
        } else {
            (Resolution::Supplied, SYSTEM)
        }
    }

    /// The supplied slots, as the prompt's attachments.
    pub fn attachments(&self) -> impl Iterator<Item = (&Slot, &Supply)> {
        self.slots
            .iter()
            .filter_map(|s| s.supply.as_ref().map(|supply| (s, supply)))
    }

    /// The required slots still open, as one line for a warning.
    pub fn missing(&self) -> Vec<&str> {
        self.slots
            .iter()
            .filter(|s| !s.met())
            .map(|s| s.description.as_str())
            .collect()
    }

    fn open_slot(&mut self, slot: &str) -> Result<&mut Slot, SupplyError> {
        if !self.is_open() {
            return Err(SupplyError::Closed);
        }
        self.slots
            .iter_mut()
            .find(|s| s.slot == slot)
            .ok_or_else(|| SupplyError::UnknownSlot(slot.to_owned()))
    }
}

/// A context request reads its stored fields as the shared lifecycle: its deadline is its SLA
/// (soft: supplies are taken until the fallback has run); resolved is supplied or skipped,
/// forced is forced, fallen back is expired.
impl Interruptible for ContextRequest {
    fn interrupt_id(&self) -> &str {
        &self.request_id
    }

    fn summary(&self) -> String {
        let wanted: Vec<&str> = self.slots.iter().map(|s| s.description.as_str()).collect();
        let summary = format!("Context for the answer: {}", wanted.join("; "));
        if summary.chars().count() <= MAX_DESCRIPTION_CHARS {
            return summary;
        }
        let mut cut: String = summary.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
        cut.push('…');
        cut
    }

    fn lifecycle(&self) -> Lifecycle {
        let at = self.resolved_at.unwrap_or(self.created_at);
        let resolved = match self.status {
            RequestStatus::Open => None,
            RequestStatus::Resolved => {
                let (resolution, by) = self.met_as();
                Some((resolution, by, None))
            }
            RequestStatus::Forced => Some((Resolution::Forced, "user", None)),
            RequestStatus::FellBack => Some((Resolution::Expired, SYSTEM, Some("expired"))),
        };
        Lifecycle {
            kind: InterruptKind::ContextRequest,
            opened_at: self.created_at,
            deadline: Some(self.deadline()),
            reminded: self.reminded,
            resolved: resolved.map(|(resolution, by, reason)| Resolved {
                resolution,
                at,
                by: by.to_owned(),
                reason: reason.map(str::to_owned),
            }),
        }
    }

    fn keep(&mut self, lifecycle: &Lifecycle) {
        self.reminded = lifecycle.reminded;
        let resolved = lifecycle.resolved.as_ref();
        self.resolved_at = resolved.map(|r| r.at);
        self.status = match resolved.map(|r| r.resolution) {
            None => RequestStatus::Open,
            Some(Resolution::Forced) => RequestStatus::Forced,
            Some(Resolution::Expired) => RequestStatus::FellBack,
            // Supplied or skipped: the lifecycle allows a request no other resolution.
            Some(_) => RequestStatus::Resolved,
        };
    }
}

//! The one shape clients read of anything a turn waits on ([`Interrupt`]), and the trait by
//! which a record that waits makes its transitions through the shared [`Lifecycle`]
//! ([`Interruptible`]).

use serde::{Deserialize, Serialize};

use super::{InterruptKind, Lifecycle, Resolution};

/// Whether an interrupt still waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum InterruptState {
    /// It waits.
    Open,
    /// It was resolved (see `resolution`).
    Resolved,
}

/// What a turn waits on, in the same shape whatever it is: an approval, a context request or a
/// clarifying question. The record it stands for (`id`, and the kind's own fields) says more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Interrupt {
    /// The id of the record it stands for (the approval's, the request's, the question's).
    pub id: String,
    /// What it waits on.
    pub kind: InterruptKind,
    /// Open or resolved.
    pub state: InterruptState,
    /// What it waits on, in a sentence for people.
    pub summary: String,
    /// When it opened (ms since the epoch).
    pub opened_at: u64,
    /// When it expires unresolved (`None`: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
    /// When the owner is reminded, half way to the deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remind_at: Option<u64>,
    /// The reminder was sent.
    #[serde(default)]
    pub reminded: bool,
    /// How it was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// When it was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<u64>,
    /// Who resolved it (`system` at a deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
    /// Why (a denial's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Interrupt {
    /// The interrupt of record `id`, described by `summary`, standing as `lifecycle` says.
    pub fn of(id: &str, summary: String, lifecycle: &Lifecycle) -> Interrupt {
        let resolved = lifecycle.resolved.as_ref();
        Interrupt {
            id: id.to_owned(),
            kind: lifecycle.kind,
            state: match resolved {
                None => InterruptState::Open,
                Some(_) => InterruptState::Resolved,
            },
            summary,
            opened_at: lifecycle.opened_at,
            deadline: lifecycle.deadline,
            remind_at: lifecycle.reminder_at(),
            reminded: lifecycle.reminded,
            resolution: resolved.map(|r| r.resolution),
            resolved_at: resolved.map(|r| r.at),
            resolved_by: resolved.map(|r| r.by.clone()),
            reason: resolved.and_then(|r| r.reason.clone()),
        }
    }
}

/// A record a turn waits on. It keeps its own stored fields and reads them as a [`Lifecycle`];
/// every transition goes through the lifecycle ([`Interruptible::through`]) and is written back,
/// so the rules (what may resolve it, once, before which deadline) are the same for every kind.
pub trait Interruptible {
    /// The record's id.
    fn interrupt_id(&self) -> &str;

    /// What it waits on, in a sentence for people.
    fn summary(&self) -> String;

    /// Where it stands.
    fn lifecycle(&self) -> Lifecycle;

    /// Writes `lifecycle` back into the record's own fields.
    fn keep(&mut self, lifecycle: &Lifecycle);

    /// Makes one transition: reads the lifecycle, applies `step`, writes it back; `step`'s
    /// answer.
    fn through<R>(&mut self, step: impl FnOnce(&mut Lifecycle) -> R) -> R
    where
        Self: Sized,
    {
        let mut lifecycle = self.lifecycle();
        let answer = step(&mut lifecycle);
        self.keep(&lifecycle);
        answer
    }

    /// The record in the one shape clients read.
    fn interrupt(&self) -> Interrupt {
        Interrupt::of(self.interrupt_id(), self.summary(), &self.lifecycle())
    }
}

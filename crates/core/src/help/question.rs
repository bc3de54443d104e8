//! A help-desk clarifying question on the shared interrupt lifecycle ([`crate::interrupt`]): the
//! turn that asks it opens it (no deadline: the loop waits as long as the user does), and the
//! next turn resolves it, `answered` when the loop took the message as its answer, `skipped`
//! when it did not (the user asked for a person, or the loop stopped). Clients read it as an
//! [`Interrupt`] on the session, the same shape as an approval or a context request.

use serde::{Deserialize, Serialize};

use super::pipeline::{HelpState, QuestionView};
use crate::interrupt::{Interrupt, InterruptKind, Interruptible, Lifecycle, Resolution};

/// A clarifying question the desk asked, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionWait {
    /// Its id (`<session id>-q<turn>`, the turn that asked it).
    pub id: String,
    /// The question as shown.
    pub question: QuestionView,
    /// Where it stands.
    pub lifecycle: Lifecycle,
}

impl QuestionWait {
    /// The question `question` asked by turn `turn` of session `session_id` at `now`.
    pub fn asked(session_id: &str, turn: u32, question: QuestionView, now: u64) -> QuestionWait {
        QuestionWait {
            id: format!("{session_id}-q{turn}"),
            question,
            lifecycle: Lifecycle::open(InterruptKind::Question, now, None),
        }
    }

    /// Resolves it, if it is open, by the turn that moved the loop from `before` to `after`:
    /// answered when the loop kept one more answer, skipped otherwise (with `reason`).
    pub fn settle(&mut self, before: &HelpState, after: &HelpState, reason: &str, now: u64) {
        let answers = |state: &HelpState| {
            state
                .clarification_context
                .as_ref()
                .map_or(0, |c| c.answers.0.len())
        };
        let (resolution, reason) = match answers(after) > answers(before) {
            true => (Resolution::Answered, None),
            false => (Resolution::Skipped, Some(reason)),
        };
        // A question resolved already stays as it was: it is resolved once.
        let _ = self.lifecycle.resolve(resolution, "user", reason, now);
    }
}

impl Interruptible for QuestionWait {
    fn interrupt_id(&self) -> &str {
        &self.id
    }

    fn summary(&self) -> String {
        let QuestionView {
            number,
            total,
            text,
        } = &self.question;
        format!("Question {number} of {total}: {text}")
    }

    fn lifecycle(&self) -> Lifecycle {
        self.lifecycle.clone()
    }

    fn keep(&mut self, lifecycle: &Lifecycle) {
        self.lifecycle = lifecycle.clone();
    }
}

/// The session's last question as clients read it.
pub fn interrupt_of(question: Option<&QuestionWait>) -> Option<Interrupt> {
    question.map(Interruptible::interrupt)
}

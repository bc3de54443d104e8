//! A help-desk clarifying question on the shared interrupt lifecycle ([`crate::interrupt`]): the
//! turn that asks it opens it (no deadline: the loop waits as long as the user does), and the
//! next turn resolves it, `answered` when the loop took the message as its answer, `skipped`
//! when it did not (the user asked for a person, or the loop stopped); the system skips it when
//! no turn can follow (the session was closed, or is full). Clients read it as an
//! [`Interrupt`] on the session, the same shape as an approval or a context request.

use serde::{Deserialize, Serialize};

use super::pipeline::{HelpState, QuestionView};
use crate::interrupt::{Interrupt, InterruptKind, Interruptible, Lifecycle, Resolution, SYSTEM};

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

impl QuestionWait {
    /// Skips it, if it is open, with `reason`: no turn will answer it (the session was closed,
    /// or is full).
    pub fn close(&mut self, reason: &str, now: u64) {
        // A question resolved already stays as it was.
        let _ = self
            .lifecycle
            .resolve(Resolution::Skipped, SYSTEM, Some(reason), now);
    }

    /// Skips it, if it is open, because the user did something else (asked for a person).
    pub fn close_by_user(&mut self, reason: &str, now: u64) {
        let _ = self
            .lifecycle
            .resolve(Resolution::Skipped, "user", Some(reason), now);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::help::pipeline::{Answers, ClarificationContext};

    fn looping(answers: usize) -> HelpState {
        let answered = (0..answers).map(|i| (format!("Q{i}?"), "yes".to_owned()));
        HelpState {
            clarification_context: Some(ClarificationContext {
                active: true,
                questions: vec!["Q0?".into(), "Q1?".into()],
                current_index: answers,
                answers: Answers(answered.collect()),
                original_doc_content: String::new(),
                requires_handoff: false,
            }),
            ..HelpState::default()
        }
    }

    fn asked() -> QuestionWait {
        let question = QuestionView {
            number: 1,
            total: 2,
            text: "Q0?".into(),
        };
        QuestionWait::asked("s1", 1, question, 10)
    }

    #[test]
    fn the_next_turn_answers_it_when_the_loop_kept_one_more_answer_else_skips_it_once() {
        let mut answered = asked();
        answered.settle(&looping(0), &looping(1), "unused", 20);
        let view = answered.interrupt();
        assert_eq!(view.resolution, Some(Resolution::Answered));
        assert_eq!((view.resolved_at, view.reason), (Some(20), None));
        let mut skipped = asked();
        skipped.settle(
            &looping(0),
            &HelpState::default(),
            "a person was asked for",
            20,
        );
        assert_eq!(skipped.interrupt().resolution, Some(Resolution::Skipped));
        assert_eq!(
            skipped.interrupt().reason.as_deref(),
            Some("a person was asked for")
        );
        // Once: a later settle or close changes nothing.
        skipped.settle(&looping(0), &looping(1), "unused", 30);
        skipped.close("closed", 31);
        assert_eq!(skipped.interrupt().resolved_at, Some(20));
        let mut closed = asked();
        closed.close("the session was closed", 40);
        let view = closed.interrupt();
        assert_eq!(view.resolved_by.as_deref(), Some(SYSTEM));
        assert_eq!(view.resolution, Some(Resolution::Skipped));
    }
}

//! What a guided turn keeps when it is cut short before its answer is whole: stopped by its
//! owner, or interrupted when its host died. The user's own action and message stay, with the
//! answer so far marked; nothing of the answer's markers is applied.

use super::turn::{Handled, Reply};
use super::{Conversation, Entry, EntryStatus, GuidedState, RunningTurn};
use crate::protocol::{ChatMessage, Role};
use crate::workflow::WorkflowState;

impl GuidedState {
    /// The state a guided turn keeps if it is cut short before its answer is whole, made when
    /// the turn begins: the workflow's state with the user's own action applied (`planned`, as
    /// the core validated it), and the history the turn builds on (`before`) with the user's
    /// message. Nothing of the model's answer is applied: its markers are read only from a
    /// whole answer.
    pub fn before_answer(
        workflow: &str,
        planned: &WorkflowState,
        before: &[ChatMessage],
        message: &str,
    ) -> GuidedState {
        let mut conversation_history = before.to_vec();
        conversation_history.push(ChatMessage::new(Role::User, message));
        GuidedState {
            workflow: workflow.to_owned(),
            current_step: planned.current_step.clone(),
            current_config: planned.config.clone(),
            conversation_history,
            skipped: planned.skipped.clone(),
        }
    }

    /// This state (a turn's [`GuidedState::before_answer`]) with the answer generated until the
    /// turn was cut short, marked `status` (`stopped` or `interrupted`). An answer with no text
    /// adds no message: the model never reads an empty one.
    pub fn with_partial_answer(mut self, text: &str, status: EntryStatus) -> GuidedState {
        if !text.is_empty() {
            let mut answer = ChatMessage::new(Role::Assistant, text);
            answer.status = Some(status);
            self.conversation_history.push(answer);
        }
        self
    }
}

/// Ends the guided turn `running` whose host died: its state `kept` with the partial answer of
/// `entries`, marked `interrupted`, committed as the turn. Accepted after the lease ended too,
/// as long as no other turn began (the caller checked `running` is the record's).
pub(super) fn interrupted(
    record: &Conversation,
    running: RunningTurn,
    kept: &GuidedState,
    entries: &[Entry],
    now: u64,
) -> Handled {
    let answer: String = entries
        .iter()
        .filter(|e| e.role == Role::Assistant)
        .map(|e| e.content.as_str())
        .collect();
    let mut next = record.clone();
    next.guided = Some(
        kept.clone()
            .with_partial_answer(&answer, EntryStatus::Interrupted),
    );
    next.running = None;
    next.turns = running.turn;
    next.updated_at = now;
    Handled {
        reply: Reply::Aborted,
        record: Some(next),
        erase: false,
        events: Vec::new(),
    }
}

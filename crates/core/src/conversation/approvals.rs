//! The conversation's side of tool approval: an answer that ends with a held call carries its
//! [`Approval`]; the owner denies it (with a reason the model reads on the next turn), or
//! approves it, which begins the turn that runs the call in the same step, so the approval is
//! recorded as approved before the call runs and a second click, a retried request or a resumed
//! turn finds it settled. The turn records the call's result as soon as it has it; the alarm
//! reminds the owner at half an approval's time and expires it at its deadline.

use super::context::changed;
use super::events::ConversationEvent;
use super::turn::{ConversationError, Handled, begin, idle};
use super::{Conversation, MAX_TURNS};
use crate::approval::{Approval, ApprovalError};
use crate::protocol::Role;

/// The message index and approval of id `approval_id`.
fn find<'a>(
    record: &'a mut Conversation,
    approval_id: &str,
) -> Result<(usize, &'a mut Approval), ConversationError> {
    record
        .entries
        .iter_mut()
        .enumerate()
        .filter(|(_, e)| e.role == Role::Assistant)
        .find_map(|(i, e)| {
            e.approval
                .as_mut()
                .filter(|a| !a.id.is_empty() && a.id == approval_id)
                .map(|a| (i, a))
        })
        .ok_or(ConversationError::Approval(ApprovalError::NotFound))
}

fn event(id: &str, message: usize, approval: &Approval) -> ConversationEvent {
    ConversationEvent::Approval {
        conversation_id: id.to_owned(),
        message,
        approval: Box::new(approval.clone()),
    }
}

/// Denies approval `approval_id` with `reason`, by `by`.
pub(super) fn deny(
    record: &Conversation,
    approval_id: &str,
    reason: &str,
    by: &str,
    now: u64,
) -> Result<Handled, ConversationError> {
    let mut next = record.clone();
    let id = next.id.clone();
    let (message, approval) = find(&mut next, approval_id)?;
    // A refused decision changes nothing (an expired approval is stored so by the alarm).
    approval
        .deny(reason, by, now)
        .map_err(ConversationError::Approval)?;
    let events = vec![event(&id, message, approval)];
    next.updated_at = now;
    Ok(changed(next, events))
}

/// Approves `approval_id` (with `edited` arguments, already checked against the tool's schema
/// by the caller) and begins the turn that runs it, in one step.
pub(super) fn begin_approved(
    record: &Conversation,
    approval_id: &str,
    edited: Option<&serde_json::Value>,
    by: &str,
    lease_ms: u64,
    now: u64,
) -> Result<Handled, ConversationError> {
    idle(record, now)?;
    if record.waiting.is_some() {
        return Err(ConversationError::ContextPending);
    }
    if record.turns >= MAX_TURNS {
        return Err(ConversationError::Full);
    }
    let mut next = record.clone();
    let id = next.id.clone();
    let (message, approval) = find(&mut next, approval_id)?;
    // The edit was checked against the tool's schema at the edge (`Approval::check_edit`).
    approval
        .approve(edited, by, now)
        .map_err(ConversationError::Approval)?;
    let events = vec![event(&id, message, approval)];
    next.updated_at = now;
    // Set before the turn begins, so the turn's view of the conversation holds the approval.
    next.approving = Some(approval_id.to_owned());
    let mut handled = begin(next, now, lease_ms)?;
    handled.events = events;
    Ok(handled)
}

/// Keeps the result of the approved call `approval_id`, run by the turn of `lease`.
pub(super) fn ran(
    record: &Conversation,
    approval_id: &str,
    lease: u32,
    output: &str,
    is_error: bool,
    now: u64,
) -> Result<Handled, ConversationError> {
    if record.running.is_none_or(|r| r.lease != lease) {
        return Err(ConversationError::TurnExpired);
    }
    let mut next = record.clone();
    let id = next.id.clone();
    let (message, approval) = find(&mut next, approval_id)?;
    approval
        .record_result(output, is_error)
        .map_err(ConversationError::Approval)?;
    let events = vec![event(&id, message, approval)];
    next.updated_at = now;
    Ok(changed(next, events))
}

/// What the approval of a turn that ends without storing its call's result says: the call may
/// or may not have run, and it will not run again.
pub const UNFINISHED_RESULT: &str = "the turn ended before the call's result was stored; it may or may not have run, and it will not run again";

/// The running turn of `next` ends (given up or interrupted): the approval whose call it ran,
/// if its result was never stored, says so. The events.
pub(super) fn settle_unfinished(next: &mut Conversation) -> Vec<ConversationEvent> {
    let Some(approval_id) = next.approving.take() else {
        return Vec::new();
    };
    let id = next.id.clone();
    match find(next, &approval_id) {
        Ok((message, approval)) if approval.result.is_none() => {
            match approval.record_result(UNFINISHED_RESULT, true) {
                Ok(()) => vec![event(&id, message, approval)],
                Err(_) => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// The alarm's work on approvals: each pending one is reminded at half its time and expired at
/// its deadline; the events (the record in `next`).
pub(super) fn expire_due(next: &mut Conversation, now: u64) -> Vec<ConversationEvent> {
    let id = next.id.clone();
    let mut events = Vec::new();
    for (i, entry) in next.entries.iter_mut().enumerate() {
        if let Some(approval) = entry.approval.as_mut()
            && (approval.expire_if_due(now) || approval.remind_if_due(now))
        {
            events.push(event(&id, i, approval));
        }
    }
    events
}

/// When the alarm is next due for a pending approval: its reminder or its deadline.
pub(super) fn next_deadline(record: &Conversation) -> Option<u64> {
    record
        .entries
        .iter()
        .filter_map(|e| e.approval.as_ref())
        .filter_map(|a| a.next_wake())
        .min()
}

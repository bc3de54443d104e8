//! What the owner did with an answer's payload cards (accepted, dismissed, failed), kept with
//! the conversation so a reload and every tab show each card as it was left: a dismissed card
//! stays dismissed, an accepted one stays applied, a failed one says why and can be tried again.

use super::turn::{ConversationError, Handled, Reply};
use super::{CardOutcome, CardState, Conversation, ConversationEvent, MAX_CARD_NOTE_CHARS};
use crate::protocol::Role;

/// Sets the outcome of payload `payload` of message `message` (indexes in the stored
/// conversation) at `now`. An accepted card is final; the same outcome again changes nothing.
pub(super) fn set_card(
    record: &Conversation,
    message: usize,
    payload: usize,
    outcome: CardOutcome,
    note: Option<&str>,
    now: u64,
) -> Result<Handled, ConversationError> {
    let entry = record
        .entries
        .get(message)
        .filter(|e| e.role == Role::Assistant && payload < e.payloads.len())
        .ok_or(ConversationError::NoSuchCard)?;
    let index = u32::try_from(payload).map_err(|_| ConversationError::NoSuchCard)?;
    let note = match (outcome, note.map(str::trim).filter(|n| !n.is_empty())) {
        (CardOutcome::Failed, Some(note)) => Some(note.chars().take(MAX_CARD_NOTE_CHARS).collect()),
        _ => None,
    };
    match entry.cards.get(&index) {
        Some(state) if state.outcome == outcome && state.note == note => {
            return Ok(Handled {
                record: None,
                erase: false,
                reply: Reply::Conversation(Box::new(record.clone())),
                events: Vec::new(),
            });
        }
        Some(state) if state.outcome == CardOutcome::Accepted => {
            return Err(ConversationError::CardSettled);
        }
        _ => {}
    }
    let state = CardState {
        outcome,
        at: now,
        note,
    };
    let mut next = record.clone();
    next.entries[message].cards.insert(index, state.clone());
    next.updated_at = now;
    let event = ConversationEvent::Card {
        conversation_id: record.id.clone(),
        message,
        payload,
        state,
    };
    Ok(Handled {
        reply: Reply::Conversation(Box::new(next.clone())),
        record: Some(next),
        erase: false,
        events: vec![event],
    })
}

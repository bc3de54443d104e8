//! What a command's watchers learn besides its own events: after each event that shows an
//! approval or a context request, the same record as an interrupt (`conversation:interrupt`),
//! the one shape every kind of wait has. Added by [`super::handle`] to every command's events,
//! so no command can forget it.

use super::events::ConversationEvent;
use super::turn::Handled;
use crate::interrupt::{Interrupt, Interruptible};

/// Adds after each event that shows an approval or a context request the same record as an
/// [`Interrupt`] (`conversation:interrupt`), so a client follows every wait in one shape.
pub(super) fn announce_interrupts(handled: &mut Handled) {
    let interrupt_of = |event: &ConversationEvent| -> Option<(String, Interrupt)> {
        match event {
            ConversationEvent::ContextRequest {
                conversation_id,
                request,
            }
            | ConversationEvent::ContextUpdate {
                conversation_id,
                request,
            }
            | ConversationEvent::ContextResolved {
                conversation_id,
                request,
            } => Some((conversation_id.clone(), request.interrupt())),
            ConversationEvent::Approval {
                conversation_id,
                approval,
                ..
            } => Some((conversation_id.clone(), approval.interrupt())),
            ConversationEvent::Message {
                conversation_id,
                message,
                ..
            } => message
                .approval
                .as_ref()
                .filter(|a| !a.id.is_empty())
                .map(|a| (conversation_id.clone(), a.interrupt())),
            ConversationEvent::ContextReminder {
                conversation_id,
                request_id,
                ..
            } => handled
                .record
                .as_ref()
                .and_then(|r| r.requests.iter().find(|q| &q.request_id == request_id))
                .map(|q| (conversation_id.clone(), q.interrupt())),
            _ => None,
        }
    };
    if !handled.events.iter().any(|e| interrupt_of(e).is_some()) {
        return;
    }
    let announced = std::mem::take(&mut handled.events);
    let mut events = Vec::with_capacity(announced.len() * 2);
    for event in announced {
        let extra = interrupt_of(&event);
        events.push(event);
        if let Some((conversation_id, interrupt)) = extra {
            events.push(ConversationEvent::Interrupt {
                conversation_id,
                interrupt,
            });
        }
    }
    handled.events = events;
}

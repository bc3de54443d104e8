//! The conversation's side of context on request: a turn deferred with its user message and
//! request (`waiting_context`), supplies and skips, "run without context", the alarm's tick
//! (reminder at half the SLA, fallback at the SLA) and the resumed turn's begin. One request
//! waits at a time; a new message meanwhile is refused (`context_pending`).

use serde::{Deserialize, Serialize};

use super::events::ConversationEvent;
use super::turn::{ConversationError, Handled, Reply, begin, idle};
use super::{Conversation, Entry, EntryStatus, Waiting};
use crate::handshake::{ContextRequest, RequestStatus, Supply};

/// One slot's supply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotSupply {
    /// The slot.
    pub slot: String,
    /// What was supplied.
    pub supply: Supply,
}

/// The request `request_id`, if it is the one waiting.
pub(super) fn waiting_request<'a>(
    record: &'a mut Conversation,
    request_id: &str,
) -> Result<&'a mut ContextRequest, ConversationError> {
    if record
        .waiting
        .as_ref()
        .is_none_or(|w| w.request_id != request_id)
    {
        return Err(ConversationError::NoSuchRequest);
    }
    record
        .requests
        .iter_mut()
        .find(|r| r.request_id == request_id)
        .ok_or(ConversationError::NoSuchRequest)
}

/// Stores the running turn's user message as `waiting_context` with its request, ending the
/// lease (the turn resumes later under a new one).
pub(super) fn defer(
    mut next: Conversation,
    lease: u32,
    mut entry: Entry,
    request: ContextRequest,
    waiting: Waiting,
    now: u64,
) -> Result<Handled, ConversationError> {
    if next
        .running
        .is_none_or(|r| r.lease != lease || r.expires_at <= now)
    {
        return Err(ConversationError::TurnExpired);
    }
    next.running = None;
    next.updated_at = now;
    entry.status = Some(EntryStatus::WaitingContext);
    entry.request_id = Some(request.request_id.clone());
    let id = next.id.clone();
    let events = vec![
        ConversationEvent::Message {
            conversation_id: id.clone(),
            message: entry.clone(),
            index: next.entries.len(),
        },
        ConversationEvent::ContextRequest {
            conversation_id: id,
            request: request.clone(),
        },
    ];
    let at = next.entries.len();
    next.count_stored(&entry);
    next.count_stored(&request);
    next.entries.push(entry);
    next.requests.push(request);
    next.waiting = Some(waiting);
    // The answer holds the waiting message only, not the whole record.
    Ok(Handled {
        reply: Reply::Conversation(Box::new(next.newest_from(at))),
        record: Some(next),
        erase: false,
        events,
    })
}

/// Applies supplies and skips to the waiting request (all or nothing).
pub(super) fn supply(
    mut next: Conversation,
    request_id: &str,
    supplies: &[SlotSupply],
    skips: &[String],
) -> Result<Handled, ConversationError> {
    let id = next.id.clone();
    let request = waiting_request(&mut next, request_id)?;
    for given in supplies {
        request
            .supply(&given.slot, given.supply.clone())
            .map_err(ConversationError::Supply)?;
    }
    for slot in skips {
        request.skip(slot).map_err(ConversationError::Supply)?;
    }
    let event = ConversationEvent::ContextUpdate {
        conversation_id: id,
        request: request.clone(),
    };
    Ok(changed(next, vec![event]))
}

/// "Run without context": the waiting request ends as forced (a request already ended is
/// left as it is, so a failed resume can be tried again).
pub(super) fn force(
    mut next: Conversation,
    request_id: &str,
    now: u64,
) -> Result<Handled, ConversationError> {
    let id = next.id.clone();
    let request = waiting_request(&mut next, request_id)?;
    let mut events = Vec::new();
    if request.is_open() {
        request.close(RequestStatus::Forced, now);
        events.push(ConversationEvent::ContextResolved {
            conversation_id: id,
            request: request.clone(),
        });
    }
    Ok(changed(next, events))
}

/// The alarm's tick: the reminder at half the SLA, the fallback at the SLA (answered with
/// [`Reply::Fallback`], which the edge turns into the resumed turn).
pub(super) fn tick(record: &Conversation, now: u64) -> Result<Handled, ConversationError> {
    let mut next = record.clone();
    let id = next.id.clone();
    let running = next.running.is_some_and(|r| r.expires_at > now);
    let Some(request_id) = next.waiting.as_ref().map(|w| w.request_id.clone()) else {
        return Ok(unchanged(Reply::Ticked { fallback: None }));
    };
    let request = waiting_request(&mut next, &request_id)?;
    let mut events = Vec::new();
    let mut fallback = None;
    if request.remind_if_due(now) {
        events.push(ConversationEvent::ContextReminder {
            conversation_id: id.clone(),
            request_id: request_id.clone(),
            deadline: request.deadline(),
        });
    }
    // The fallback waits for a running turn to end.
    if !running && request.expire_if_due(now) {
        events.push(ConversationEvent::ContextResolved {
            conversation_id: id,
            request: request.clone(),
        });
        fallback = Some(request_id);
    }
    if events.is_empty() {
        return Ok(unchanged(Reply::Ticked { fallback: None }));
    }
    let mut handled = changed(next, events);
    handled.reply = Reply::Ticked { fallback };
    Ok(handled)
}

/// Begins the deferred turn of `request_id`, once its request is ready, forced or fallen back.
pub(super) fn begin_resume(
    record: &Conversation,
    request_id: &str,
    lease_ms: u64,
    now: u64,
) -> Result<Handled, ConversationError> {
    idle(record, now)?;
    let mut next = record.clone();
    let id = next.id.clone();
    let request = waiting_request(&mut next, request_id)?;
    let mut events = Vec::new();
    if request.is_open() {
        if !request.ready() {
            return Err(ConversationError::ContextMissing);
        }
        request.close(RequestStatus::Resolved, now);
        events.push(ConversationEvent::ContextResolved {
            conversation_id: id,
            request: request.clone(),
        });
    }
    let reopens = events.len() == 1;
    let request = request.clone();
    let waiting = next
        .waiting
        .clone()
        .ok_or(ConversationError::NoSuchRequest)?;
    let mut handled = begin(next, now, lease_ms)?;
    if let Some(running) = handled.record.as_mut().and_then(|r| r.running.as_mut()) {
        running.reopens = reopens;
    }
    let Reply::Begun {
        lease,
        conversation,
        ..
    } = handled.reply
    else {
        unreachable!("begin answers Begun");
    };
    handled.reply = Reply::Resumed {
        lease,
        conversation,
        request: Box::new(request),
        waiting: Box::new(waiting),
    };
    handled.events = events;
    Ok(handled)
}

/// Opens the waiting request again when the running turn ended it (`reopens`): its resumed turn
/// was given up before it answered. The event that tells the watching tabs, if it opened.
pub(super) fn reopen_waiting(next: &mut Conversation) -> Option<ConversationEvent> {
    if next.running.is_none_or(|r| !r.reopens) {
        return None;
    }
    let request_id = next.waiting.as_ref().map(|w| w.request_id.clone())?;
    let conversation_id = next.id.clone();
    let request = waiting_request(next, &request_id).ok()?;
    if request.is_open() {
        return None;
    }
    request.reopen();
    Some(ConversationEvent::ContextUpdate {
        conversation_id,
        request: request.clone(),
    })
}

/// Marks the waiting message answered and the request's wait over (a resumed commit).
pub(super) fn answered(next: &mut Conversation, request_id: &str) -> Result<(), ConversationError> {
    if next
        .waiting
        .as_ref()
        .is_none_or(|w| w.request_id != request_id)
    {
        return Err(ConversationError::NoSuchRequest);
    }
    next.waiting = None;
    for entry in &mut next.entries {
        if entry.request_id.as_deref() == Some(request_id)
            && entry.status == Some(EntryStatus::WaitingContext)
        {
            entry.status = Some(EntryStatus::Answered);
        }
    }
    Ok(())
}

/// `next` saved and answered, with `events` for the watchers.
pub(super) fn changed(next: Conversation, events: Vec<ConversationEvent>) -> Handled {
    Handled {
        reply: Reply::Conversation(Box::new(next.clone())),
        record: Some(next),
        erase: false,
        events,
    }
}

fn unchanged(reply: Reply) -> Handled {
    Handled {
        record: None,
        erase: false,
        reply,
        events: Vec::new(),
    }
}

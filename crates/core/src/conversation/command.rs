//! The conversation protocol: [`handle`] checks who asks (another owner's conversation is not
//! found, exactly like a missing one; a guided conversation also needs its token) and applies
//! the turn rules: one turn at a time (a turn that never committed is given up when its lease
//! ends), a guided turn states the count of turns it builds on, a commit must be the running
//! turn's.

use serde::{Deserialize, Serialize};

use super::announce::announce_interrupts;
use super::context::{self, SlotSupply};
use super::events::ConversationEvent;
use super::turn::{ConversationError, Handled, Reply, begin, commit, idle};
use super::{
    CardOutcome, Conversation, ConversationKind, Entry, GuidedState, MAX_STORED_TOOL_OUTPUT,
    MAX_TURNS, Waiting, title_from,
};
use super::{approvals, cards, cut_short};
use crate::handshake::ContextRequest;
use crate::workflow::Config;

/// A change or a read asked of a conversation by its owner. Externally tagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Begin a guided turn that builds on `turns` committed turns, or (`None`) the first turn
    /// of a conversation whose id the server just made, with this token's hash.
    BeginGuided {
        /// SHA-256 of the caller's conversation token.
        token_hash: String,
        /// Turns the caller's state builds on; `None` starts the conversation.
        turns: Option<u32>,
        /// How long the turn may run before it is given up, in ms.
        lease_ms: u64,
    },
    /// Store the first guided turn of a conversation whose id the server just made, whole: no
    /// other caller can know the id before this turn answers, so the turn holds no lease, and
    /// nothing is stored until it is done.
    CreateGuided {
        /// SHA-256 of the conversation's token.
        token_hash: String,
        /// The state after the turn.
        state: GuidedState,
    },
    /// Begin an assistant turn; with `start`, the first turn of a conversation whose id the
    /// server just made, titled from `message`.
    BeginAssistant {
        /// The user's message (or the action's label).
        message: String,
        /// The conversation is new (its id was just made by the server).
        start: bool,
        /// How long the turn may run before it is given up, in ms.
        lease_ms: u64,
    },
    /// Commit the running guided turn with the workflow's new state.
    CommitGuided {
        /// The lease of the turn begun.
        lease: u32,
        /// The state after it.
        state: GuidedState,
    },
    /// Commit the running assistant turn's messages.
    CommitAssistant {
        /// The lease of the turn begun.
        lease: u32,
        /// The user's message and the answer (a resumed turn: the answer only).
        entries: Vec<Entry>,
        /// The deferred turn this commit answers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resumed: Option<String>,
        /// Requests the turn made and resolved itself (filled automatically), for the record.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requests: Vec<ContextRequest>,
        /// The writing style the turn used, kept for the next ones.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        writing_style: Option<String>,
    },
    /// Store the running assistant turn's user message as waiting for `request`, ending the
    /// lease.
    Defer {
        /// The lease of the turn begun.
        lease: u32,
        /// The user's message.
        entry: Box<Entry>,
        /// What it waits for.
        request: Box<ContextRequest>,
        /// What resumes it.
        waiting: Box<Waiting>,
    },
    /// Supply and skip slots of the waiting request (all or nothing).
    Supply {
        /// The request.
        request_id: String,
        /// Slots supplied.
        #[serde(default)]
        supplies: Vec<SlotSupply>,
        /// Slots skipped.
        #[serde(default)]
        skips: Vec<String>,
    },
    /// "Run without context".
    Force {
        /// The request.
        request_id: String,
    },
    /// The object's alarm: reminder and fallback of the waiting request.
    Tick,
    /// Begin the deferred turn of a request that is ready, forced or fallen back.
    BeginResume {
        /// The request.
        request_id: String,
        /// How long the turn may run before it is given up, in ms.
        lease_ms: u64,
    },
    /// Give up the running turn (the model failed): nothing of it is kept, and a resumed turn's
    /// request waits again.
    Abort {
        /// The lease of the turn begun.
        lease: u32,
    },
    /// End the running turn whose host died before it committed (a deploy, an eviction, a
    /// crash), keeping what it had made: the user's message and the partial answer, marked
    /// `interrupted`. Accepted after the lease ended too, as long as no other turn began. A
    /// resumed turn with nothing answered is given up instead (its request waits again).
    Interrupt {
        /// The lease of the turn that died.
        lease: u32,
        /// The user's message (a fresh turn) and the partial answer, as far as they got.
        entries: Vec<Entry>,
        /// A guided turn's state to keep ([`GuidedState::before_answer`]), to which the partial
        /// answer is added; a guided turn without it keeps nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guided: Option<GuidedState>,
    },
    /// Read a page of an assistant conversation's messages, the newest `limit` before index
    /// `before` (the end when `None`), for its owner's reader ([`Conversation::page`]).
    ReadPage {
        /// The first message not on the page (`None`: the page ends with the newest).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<u32>,
        /// Most messages on the page (1 to [`super::MAX_PAGE_MESSAGES`]).
        limit: u32,
    },
    /// Read the conversation: a guided one with its token, an assistant one without (a
    /// conversation of the other kind is not found).
    Read {
        /// SHA-256 of the caller's token (guided conversations).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token_hash: Option<String>,
    },
    /// Replace a guided conversation's collected fields (an inline edit), between turns.
    SetGuidedConfig {
        /// SHA-256 of the caller's token.
        token_hash: String,
        /// The fields, already validated against the workflow.
        config: Config,
    },
    /// Keep what the owner did with a payload card of an answer (see [`super::CardState`]).
    SetCard {
        /// The answer's index among the conversation's messages.
        message: usize,
        /// The payload's index in the answer's `payloads`.
        payload: usize,
        /// What the owner did.
        outcome: CardOutcome,
        /// Why applying it failed (kept for `failed` only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Deny a pending approval, with a reason the model reads on the next turn.
    DenyApproval {
        /// The approval.
        approval_id: String,
        /// Why (may be empty).
        reason: String,
        /// Who denied it.
        by: String,
    },
    /// Approve a pending approval and begin the turn that runs its call, in one step.
    BeginApproved {
        /// The approval.
        approval_id: String,
        /// The owner's edited arguments, checked against the tool's schema by the caller.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<serde_json::Value>,
        /// Who approved it.
        by: String,
        /// How long the turn may run before it is given up, in ms.
        lease_ms: u64,
    },
    /// Keep what the approved call returned (the running turn of `lease` ran it).
    ApprovalRan {
        /// The approval.
        approval_id: String,
        /// The lease of the turn that ran it.
        lease: u32,
        /// The tool's text.
        output: String,
        /// The call failed.
        #[serde(default)]
        is_error: bool,
    },
    /// Delete an assistant conversation (a guided one ends with its retention, or when its
    /// owner erases all their data: [`Command::Erase`]).
    Delete,
    /// Delete a conversation of either kind: the owner erases all their data (`DELETE
    /// /api/me`), which needs no guided token.
    Erase,
    /// The whole record of a conversation of either kind, for its owner's export, without the
    /// guided token's hash.
    Export,
}

/// Applies `command` of `owner` to conversation `id` (`record` as stored, if any) at `now`.
///
/// ```
/// use stepwise_core::conversation::{handle, Command, ConversationError};
/// let start = Command::BeginAssistant { message: "Find EGFR articles".into(), start: true, lease_ms: 60_000 };
/// let first = handle(None, "c1", "o1", &start, 10).unwrap();
/// let record = first.record.unwrap();
/// assert_eq!(record.title, "Find EGFR articles");
/// // A second turn while the first runs is refused.
/// let next = Command::BeginAssistant { message: "More".into(), start: false, lease_ms: 60_000 };
/// assert_eq!(handle(Some(&record), "c1", "o1", &next, 20).unwrap_err(), ConversationError::TurnInProgress);
/// // Another owner does not see it.
/// assert_eq!(handle(Some(&record), "c1", "o2", &next, 20).unwrap_err(), ConversationError::NotFound);
/// ```
pub fn handle(
    record: Option<&Conversation>,
    id: &str,
    owner: &str,
    command: &Command,
    now: u64,
) -> Result<Handled, ConversationError> {
    let mut handled = apply(record, id, owner, command, now)?;
    announce_interrupts(&mut handled);
    Ok(handled)
}

/// [`handle`]'s work, before the interrupts it changed are announced.
fn apply(
    record: Option<&Conversation>,
    id: &str,
    owner: &str,
    command: &Command,
    now: u64,
) -> Result<Handled, ConversationError> {
    if record.is_some_and(|r| r.owner != owner) {
        // Someone else's conversation: not found, and never replaced by a new one.
        return Err(ConversationError::NotFound);
    }
    match command {
        Command::BeginGuided {
            token_hash,
            turns,
            lease_ms,
        } => {
            let next = match (record, turns) {
                (None, None) => empty(
                    id,
                    owner,
                    ConversationKind::Guided,
                    now,
                    Some(token_hash.clone()),
                ),
                // A client's id never starts a conversation; a new id never names a stored one.
                (None, Some(_)) | (Some(_), None) => return Err(ConversationError::NotFound),
                (Some(record), Some(turns)) => {
                    let record = guided(record, Some(token_hash))?;
                    idle(record, now)?;
                    if *turns != record.turns {
                        return Err(ConversationError::StaleTurn {
                            stated: *turns,
                            current: record.turns,
                        });
                    }
                    record.clone()
                }
            };
            begin(next, now, *lease_ms)
        }
        Command::CreateGuided { token_hash, state } => {
            if record.is_some() {
                // A new id never names a stored conversation.
                return Err(ConversationError::NotFound);
            }
            let next = Conversation {
                turns: 1,
                guided: Some(state.clone()),
                ..empty(
                    id,
                    owner,
                    ConversationKind::Guided,
                    now,
                    Some(token_hash.clone()),
                )
            };
            saved(next)
        }
        Command::BeginAssistant {
            message,
            start,
            lease_ms,
        } => {
            let next = match (record, start) {
                (None, true) => Conversation {
                    title: title_from(message),
                    ..empty(id, owner, ConversationKind::Assistant, now, None)
                },
                (Some(record), false) => {
                    let record = assistant(record)?;
                    idle(record, now)?;
                    if record.waiting.is_some() {
                        return Err(ConversationError::ContextPending);
                    }
                    if record.turns >= MAX_TURNS {
                        return Err(ConversationError::Full);
                    }
                    record.clone()
                }
                _ => return Err(ConversationError::NotFound),
            };
            begin(next, now, *lease_ms)
        }
        Command::CommitGuided { lease, state } => {
            let mut next = guided(found(record)?, None)?.clone();
            commit(&mut next, *lease, now)?;
            next.guided = Some(state.clone());
            saved(next)
        }
        Command::CommitAssistant {
            lease,
            entries,
            resumed,
            requests,
            writing_style,
        } => {
            let mut next = assistant(found(record)?)?.clone();
            commit(&mut next, *lease, now)?;
            if let Some(request_id) = resumed {
                context::answered(&mut next, request_id)?;
            }
            for request in requests {
                next.count_stored(request);
                next.requests.push(request.clone());
            }
            if writing_style.is_some() {
                next.writing_style.clone_from(writing_style);
            }
            append(next, entries)
        }
        Command::Defer {
            lease,
            entry,
            request,
            waiting,
        } => {
            let next = assistant(found(record)?)?.clone();
            context::defer(
                next,
                *lease,
                Entry::clone(entry),
                ContextRequest::clone(request),
                Waiting::clone(waiting),
                now,
            )
        }
        Command::Supply {
            request_id,
            supplies,
            skips,
        } => context::supply(
            assistant(found(record)?)?.clone(),
            request_id,
            supplies,
            skips,
        ),
        Command::Force { request_id } => {
            context::force(assistant(found(record)?)?.clone(), request_id, now)
        }
        Command::Tick => {
            let mut next = found(record)?.clone();
            let expired = approvals::expire_due(&mut next, now);
            let mut handled = context::tick(&next, now)?;
            if !expired.is_empty() {
                next.updated_at = now;
                handled.record = Some(handled.record.unwrap_or(next));
                handled.events.splice(0..0, expired);
            }
            Ok(handled)
        }
        Command::BeginResume {
            request_id,
            lease_ms,
        } => context::begin_resume(assistant(found(record)?)?, request_id, *lease_ms, now),
        Command::Interrupt {
            lease,
            entries,
            guided: kept,
        } => {
            let record = found(record)?;
            if record.kind == ConversationKind::Guided {
                let Some(running) = record.running.filter(|r| r.lease == *lease) else {
                    return Err(ConversationError::TurnExpired);
                };
                return match kept {
                    Some(kept) => Ok(cut_short::interrupted(record, running, kept, entries, now)),
                    // A turn that left no state keeps nothing.
                    None => abort(record, *lease),
                };
            }
            let record = assistant(record)?;
            let Some(running) = record.running.filter(|r| r.lease == *lease) else {
                return Err(ConversationError::TurnExpired);
            };
            let answered = entries
                .iter()
                .any(|e| e.role == crate::protocol::Role::Assistant && !e.content.is_empty());
            if entries.is_empty() || (running.reopens && !answered) {
                return abort(record, *lease);
            }
            let mut next = record.clone();
            if let Some(request_id) = next.waiting.as_ref().map(|w| w.request_id.clone())
                && running.reopens
            {
                context::answered(&mut next, &request_id)?;
            }
            let settled = approvals::settle_unfinished(&mut next);
            next.running = None;
            next.turns = running.turn;
            next.updated_at = now;
            let mut handled = append(next, entries)?;
            handled.events.extend(settled);
            handled.reply = Reply::Aborted;
            Ok(handled)
        }
        Command::Abort { lease } => abort(found(record)?, *lease),
        Command::ReadPage { before, limit } => {
            let record = assistant(found(record)?)?;
            let page = record.page(before.map(|b| b as usize), *limit as usize);
            Ok(Handled {
                record: None,
                erase: false,
                reply: Reply::Page {
                    message_count: record.message_count(),
                    interrupts: page.interrupts(),
                    conversation: Box::new(page),
                },
                events: Vec::new(),
            })
        }
        Command::Read { token_hash } => {
            let record = found(record)?;
            let record = match token_hash {
                Some(token_hash) => guided(record, Some(token_hash))?,
                None => assistant(record)?,
            };
            Ok(Handled {
                record: None,
                erase: false,
                reply: Reply::Conversation(Box::new(record.clone())),
                events: Vec::new(),
            })
        }
        Command::SetGuidedConfig { token_hash, config } => {
            let record = guided(found(record)?, Some(token_hash))?;
            idle(record, now)?;
            let mut next = record.clone();
            // Nothing to edit before the first turn has committed.
            let state = next.guided.as_mut().ok_or(ConversationError::NotFound)?;
            state.current_config = config.clone();
            next.updated_at = now;
            saved(next)
        }
        Command::SetCard {
            message,
            payload,
            outcome,
            note,
        } => {
            let record = assistant(found(record)?)?;
            cards::set_card(record, *message, *payload, *outcome, note.as_deref(), now)
        }
        Command::DenyApproval {
            approval_id,
            reason,
            by,
        } => approvals::deny(assistant(found(record)?)?, approval_id, reason, by, now),
        Command::BeginApproved {
            approval_id,
            arguments,
            by,
            lease_ms,
        } => approvals::begin_approved(
            assistant(found(record)?)?,
            approval_id,
            arguments.as_ref(),
            by,
            *lease_ms,
            now,
        ),
        Command::ApprovalRan {
            approval_id,
            lease,
            output,
            is_error,
        } => approvals::ran(
            assistant(found(record)?)?,
            approval_id,
            *lease,
            output,
            *is_error,
            now,
        ),
        Command::Export => {
            let mut record = found(record)?.clone();
            record.token_hash = None;
            Ok(Handled {
                record: None,
                erase: false,
                reply: Reply::Conversation(Box::new(record)),
                events: Vec::new(),
            })
        }
        Command::Delete | Command::Erase => {
            let record = found(record)?;
            if matches!(command, Command::Delete) {
                assistant(record)?;
            }
            Ok(Handled {
                record: None,
                erase: true,
                reply: Reply::Deleted,
                events: Vec::new(),
            })
        }
    }
}

/// Gives up the running turn `lease`: nothing of it is kept; a resumed turn's request waits
/// again; a conversation whose first turn failed is not kept (its client never learned its id).
fn abort(record: &Conversation, lease: u32) -> Result<Handled, ConversationError> {
    if record.running.is_none_or(|r| r.lease != lease) {
        return Err(ConversationError::TurnExpired);
    }
    let mut next = record.clone();
    let reopened = context::reopen_waiting(&mut next);
    let mut settled = approvals::settle_unfinished(&mut next);
    settled.extend(reopened);
    next.running = None;
    if next.turns == 0 && next.entries.is_empty() {
        return Ok(Handled {
            record: None,
            erase: true,
            reply: Reply::Aborted,
            events: Vec::new(),
        });
    }
    Ok(Handled {
        record: Some(next),
        erase: false,
        reply: Reply::Aborted,
        events: settled,
    })
}

/// `next` with `entries` added (tool outputs clipped), the assistant's told to the watchers;
/// the reply is a view of the added messages ([`Conversation::newest_from`]).
fn append(mut next: Conversation, entries: &[Entry]) -> Result<Handled, ConversationError> {
    let id = next.id.clone();
    let first = next.entries.len();
    let events = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.role == crate::protocol::Role::Assistant)
        .map(|(i, e)| ConversationEvent::Message {
            conversation_id: id.clone(),
            message: e.clone(),
            index: first + i,
        })
        .collect();
    for entry in entries.iter().cloned().map(clip_tool_outputs) {
        next.count_stored(&entry);
        next.entries.push(entry);
    }
    // The answer holds the new messages only (with their index), not the whole record.
    Ok(Handled {
        reply: Reply::Conversation(Box::new(next.newest_from(first))),
        record: Some(next),
        erase: false,
        events,
    })
}

/// A conversation with nothing in it yet, created at `now`.
fn empty(
    id: &str,
    owner: &str,
    kind: ConversationKind,
    now: u64,
    token_hash: Option<String>,
) -> Conversation {
    Conversation {
        id: id.to_owned(),
        owner: owner.to_owned(),
        kind,
        title: String::new(),
        created_at: now,
        updated_at: now,
        turns: 0,
        leases: 0,
        running: None,
        token_hash,
        guided: None,
        entries: Vec::new(),
        entries_from: 0,
        stored_bytes: 0,
        requests: Vec::new(),
        waiting: None,
        writing_style: None,
        approving: None,
    }
}

fn found(record: Option<&Conversation>) -> Result<&Conversation, ConversationError> {
    record.ok_or(ConversationError::NotFound)
}

/// The record as a guided conversation, its token checked when one is given.
fn guided<'a>(
    record: &'a Conversation,
    token_hash: Option<&String>,
) -> Result<&'a Conversation, ConversationError> {
    if record.kind != ConversationKind::Guided {
        return Err(ConversationError::NotFound);
    }
    if let Some(token_hash) = token_hash {
        let stored = record.token_hash.as_deref().unwrap_or("");
        if !same_secret(stored, token_hash) {
            return Err(ConversationError::Forbidden);
        }
    }
    Ok(record)
}

fn assistant(record: &Conversation) -> Result<&Conversation, ConversationError> {
    if record.kind == ConversationKind::Assistant {
        Ok(record)
    } else {
        Err(ConversationError::NotFound)
    }
}

/// The entry with each tool output cut to [`MAX_STORED_TOOL_OUTPUT`] characters: the model read
/// it whole during the turn; what is kept is a record of it.
fn clip_tool_outputs(mut entry: Entry) -> Entry {
    for tool_use in &mut entry.tool_history {
        if let Some((cut, _)) = tool_use.output.char_indices().nth(MAX_STORED_TOOL_OUTPUT) {
            tool_use.output.truncate(cut);
            tool_use.output.push_str("\n[cut for storage]");
        }
    }
    entry
}

fn saved(next: Conversation) -> Result<Handled, ConversationError> {
    Ok(Handled {
        reply: Reply::Conversation(Box::new(next.clone())),
        record: Some(next),
        erase: false,
        events: Vec::new(),
    })
}

/// Compares two secrets' hashes in time independent of where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

//! What every conversation command answers, and a turn's lease: the [`Reply`] and [`Handled`]
//! of a command, the [`ConversationError`] that refuses one (the record unchanged), and the
//! lease rules (no turn runs, a turn begins, the running turn commits). The commands
//! (`command.rs`) hand deferred turns to `context.rs`; both build on this module, so
//! `context.rs` needs nothing of `command.rs`.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::events::ConversationEvent;
use super::{Conversation, MAX_STORED_BYTES, MAX_TURNS, RunningTurn, Waiting};
use crate::approval::ApprovalError;
use crate::handshake::{ContextRequest, SupplyError};

/// Why a command was refused; the record is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConversationError {
    /// No such conversation of this owner.
    #[error("no such conversation")]
    NotFound,
    /// The guided conversation's token is missing or wrong.
    #[error("the conversation token does not match")]
    Forbidden,
    /// Another turn of this conversation is running.
    #[error("another turn of this conversation is running; wait for it to finish")]
    TurnInProgress,
    /// The caller's state is behind (another tab took a turn).
    #[error("this turn builds on {stated} turns but the conversation has {current}; reload it")]
    StaleTurn {
        /// Turns the caller built on.
        stated: u32,
        /// Turns committed.
        current: u32,
    },
    /// The turn being committed is no longer running (its lease ended).
    #[error("the turn was given up before it finished")]
    TurnExpired,
    /// No request of that id waits on this conversation.
    #[error("no context request of that id is waiting on this conversation")]
    NoSuchRequest,
    /// A required slot is still open.
    #[error("the request still misses required context; supply it, skip it, or run without it")]
    ContextMissing,
    /// A message waits for context; a new one must wait.
    #[error(
        "a message of this conversation waits for context; supply it, skip it, or run without it first"
    )]
    ContextPending,
    /// A supply or skip was refused.
    #[error(transparent)]
    Supply(SupplyError),
    /// No answer of the conversation has a payload card at those indexes.
    #[error("no payload card of this conversation is at that message and payload")]
    NoSuchCard,
    /// The card was accepted already; its outcome cannot change.
    #[error("this card was accepted already")]
    CardSettled,
    /// An approval decision was refused.
    #[error(transparent)]
    Approval(ApprovalError),
    /// The conversation holds the most turns, or the most bytes, it may.
    #[error(
        "this conversation is full ({MAX_TURNS} turns or {MAX_STORED_BYTES} bytes); start a new one"
    )]
    Full,
}

impl ConversationError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            ConversationError::NotFound => "conversation_not_found",
            ConversationError::Forbidden => "forbidden",
            ConversationError::TurnInProgress => "turn_in_progress",
            ConversationError::StaleTurn { .. } => "stale_turn",
            ConversationError::TurnExpired => "turn_expired",
            ConversationError::Full => "conversation_full",
            ConversationError::NoSuchRequest => "context_request_not_found",
            ConversationError::ContextMissing => "context_missing",
            ConversationError::ContextPending => "context_pending",
            ConversationError::Supply(error) => error.code(),
            ConversationError::NoSuchCard => "card_not_found",
            ConversationError::CardSettled => "card_settled",
            ConversationError::Approval(error) => error.code(),
        }
    }
}

/// What a command answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// A turn began: its number and lease, and the conversation as it was before it (a view
    /// holding what the turn reads: [`Conversation::for_turn`]).
    Begun {
        /// The turn's number.
        turn: u32,
        /// Its lease, for the commit.
        lease: u32,
        /// The conversation.
        conversation: Box<Conversation>,
    },
    /// The conversation (after a commit, an edit, or for a read).
    Conversation(Box<Conversation>),
    /// A page of an assistant conversation's messages ([`Conversation::page`]), with how many
    /// messages it has in all and what the page's turns waited on.
    Page {
        /// The page: its messages from index `entries_from` on, the requests they name.
        conversation: Box<Conversation>,
        /// Messages in the whole conversation.
        message_count: usize,
        /// The page's approvals and requests, as interrupts.
        interrupts: Vec<crate::interrupt::Interrupt>,
    },
    /// A deferred turn began: its lease, the conversation before it, the request and the ask.
    Resumed {
        /// Its lease, for the commit.
        lease: u32,
        /// The conversation.
        conversation: Box<Conversation>,
        /// The request, ended.
        request: Box<ContextRequest>,
        /// What resumes.
        waiting: Box<Waiting>,
    },
    /// The alarm's tick: the request to fall back on, if its SLA passed.
    Ticked {
        /// The request whose turn now runs without what is missing.
        fallback: Option<String>,
    },
    /// The turn was given up.
    Aborted,
    /// The conversation is gone.
    Deleted,
}

/// A handled command: the record to save (`None`: unchanged), whether to erase it, the reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Handled {
    /// The new record, when it changed.
    pub record: Option<Conversation>,
    /// The record is to be erased.
    pub erase: bool,
    /// The answer.
    pub reply: Reply,
    /// What to tell the browsers watching the conversation.
    pub events: Vec<ConversationEvent>,
}

/// No turn runs (one whose lease ended is given up).
pub(super) fn idle(record: &Conversation, now: u64) -> Result<(), ConversationError> {
    match record.running {
        Some(running) if running.expires_at > now => Err(ConversationError::TurnInProgress),
        _ => Ok(()),
    }
}

impl Conversation {
    /// Whether a turn could begin at `now`: none runs, and the conversation is not full (what
    /// [`begin`] refuses, for a caller that must know before it stores anything).
    pub fn may_begin(&self, now: u64) -> Result<(), ConversationError> {
        idle(self, now)?;
        if self.is_full() {
            return Err(ConversationError::Full);
        }
        Ok(())
    }
}

/// Begins a turn on `next`: a new lease, the conversation as it was in the reply (the turn's
/// view of it).
pub(super) fn begin(
    mut next: Conversation,
    now: u64,
    lease_ms: u64,
) -> Result<Handled, ConversationError> {
    if next.is_full() {
        return Err(ConversationError::Full);
    }
    let turn = next.turns + 1;
    // What the turn reads, not the whole record: its size does not grow with the conversation.
    let before = Box::new(next.for_turn());
    next.leases += 1;
    let lease = next.leases;
    next.running = Some(RunningTurn {
        turn,
        lease,
        started_at: now,
        expires_at: now.saturating_add(lease_ms),
        reopens: false,
    });
    Ok(Handled {
        record: Some(next),
        erase: false,
        reply: Reply::Begun {
            turn,
            lease,
            conversation: before,
        },
        events: Vec::new(),
    })
}

/// Ends the running turn `lease` as committed (refused once its lease has ended).
pub(super) fn commit(
    next: &mut Conversation,
    lease: u32,
    now: u64,
) -> Result<(), ConversationError> {
    let Some(running) = next
        .running
        .filter(|r| r.lease == lease && r.expires_at > now)
    else {
        return Err(ConversationError::TurnExpired);
    };
    next.running = None;
    next.approving = None;
    next.turns = running.turn;
    next.updated_at = now;
    Ok(())
}

//! A help-desk session as its Durable Object keeps it: the owner, the transcript, the pipeline's
//! [`HelpState`] (the clarification context among it) loaded at the start of a turn and saved at
//! its end, the escalation, and how often the knowledge base was searched. [`handle`] is the one
//! entry point: a command of a caller in, the record to save and the reply out; a refused
//! command changes nothing.

use serde::{Deserialize, Serialize};

use super::HelpError;
pub use super::pipeline::EscalationReason;
use super::pipeline::{self, Answers, DialogState, DocRef, HelpState, Node, Outcome, QuestionView};
use super::question::{QuestionWait, interrupt_of};
use crate::interrupt::Interrupt;

/// Most turns of one session.
pub const MAX_TURNS: u32 = 40;
/// Longest reply kept in the transcript, in characters.
pub const MAX_STORED_REPLY_CHARS: usize = 8000;

/// Who sends a command: the session's owner (by owner id) or an operator (admin token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    /// An owner id.
    Owner(String),
    /// An operator, who may read and resolve escalated sessions.
    Operator,
}

/// Whether a person is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// The desk answers.
    Open,
    /// Handed to a person, who replies in the session; the desk still answers meanwhile.
    Escalated,
    /// An operator closed it.
    Resolved,
}

/// The handoff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    /// When it happened.
    pub at: u64,
    /// Why.
    pub reason: EscalationReason,
    /// When an operator resolved it.
    pub resolved_at: Option<u64>,
    /// Whether operators were told (listed and the `session.escalated` event sent); until then
    /// the session's object retries.
    #[serde(default)]
    pub announced: bool,
    /// The question being handled when the session was handed over (the user may ask others
    /// afterwards: this is what the person takes over).
    #[serde(default)]
    pub query: Option<String>,
    /// Its article.
    #[serde(default)]
    pub doc: Option<DocRef>,
    /// The clarifying questions answered for it, in order.
    #[serde(default)]
    pub answers: Answers,
}

/// Who wrote a transcript line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speaker {
    /// The user.
    User,
    /// The desk.
    Desk,
}

/// A line of the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelpMessage {
    /// Who wrote it.
    pub role: Speaker,
    /// The text, verbatim for the user.
    pub text: String,
    /// When.
    pub at: u64,
    /// The clarifying question this line asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<QuestionView>,
    /// Shown after the text (the handoff footer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footer: Option<String>,
    /// The article the answer comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<DocRef>,
    /// The nodes the turn visited (desk lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<Node>,
}

/// A turn's hold on the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The turn's id.
    pub id: String,
    /// When it lapses.
    pub until: u64,
}

/// The session record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelpSession {
    /// Its id.
    pub id: String,
    /// Its owner's id.
    pub owner: String,
    /// When it started.
    pub created_at: u64,
    /// When it last changed.
    pub updated_at: u64,
    /// The pipeline's state between turns.
    pub state: HelpState,
    /// The transcript.
    pub messages: Vec<HelpMessage>,
    /// Whether a person is needed.
    pub status: SessionStatus,
    /// The handoff, once there is one.
    pub escalation: Option<Escalation>,
    /// The last answer recommends a person (no article matched, or its article needs one).
    pub handoff_offered: bool,
    /// How many turns searched the knowledge base.
    pub search_calls: u32,
    /// Turns committed.
    pub turns: u32,
    /// Turns begun, committed or not: a turn's events are numbered by it, so the numbers of a
    /// turn that was given up (failed, stopped) are never used again. 0 in records stored before
    /// it was kept, which then count from `turns`.
    #[serde(default)]
    pub begun: u32,
    /// The running turn's hold.
    pub lease: Option<Lease>,
    /// The last clarifying question the desk asked, open until the next turn resolves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<QuestionWait>,
}

/// A committed turn: the user's message and the pipeline's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// The message, verbatim.
    pub message: String,
    /// The reply.
    pub reply: String,
    /// Shown after the reply.
    pub footer: Option<String>,
    /// The question asked, while clarifying.
    pub question: Option<QuestionView>,
    /// The article the reply answers from.
    pub source: Option<DocRef>,
    /// Nodes visited.
    pub trace: Vec<Node>,
    /// The state to keep.
    pub state: HelpState,
    /// Whether the turn searched.
    pub searched: bool,
    /// Hand the session to a person, for this reason.
    pub escalate: Option<EscalationReason>,
    /// Whether the reply recommends a person.
    pub offer_handoff: bool,
}

impl TurnRecord {
    /// The record of `message` answered by `outcome`.
    pub fn new(message: &str, outcome: &Outcome) -> Self {
        TurnRecord {
            message: message.to_owned(),
            reply: outcome.reply.clone(),
            footer: outcome.footer.clone(),
            question: outcome.question.clone(),
            source: outcome.source.clone(),
            trace: outcome.trace.clone(),
            state: outcome.state.clone(),
            searched: outcome.searched,
            escalate: outcome.escalate,
            offer_handoff: outcome.offer_handoff,
        }
    }
}

/// A command to a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HelpCommand {
    /// Start a turn (the owner): refused while another turn holds the session, or once it is
    /// closed or full (a session handed to a person still takes questions). A missing session is created only with `create` (an id the
    /// server just made); a client's id that names no session of its own is not found, exactly
    /// as another owner's session is.
    Begin {
        /// The turn's id.
        lease_id: String,
        /// How long the hold lasts.
        lease_ms: u64,
        /// The session id is new: create the session.
        create: bool,
    },
    /// Keep a turn begun with `lease_id`.
    Commit {
        /// The turn's id.
        lease_id: String,
        /// What happened.
        turn: Box<TurnRecord>,
    },
    /// Give a turn up (a failed model call): the hold goes, a session still empty goes too.
    Release {
        /// The turn's id.
        lease_id: String,
    },
    /// Read the session.
    Read,
    /// The user asks for a person (the "Talk to a person" button): the same handoff as a typed
    /// request, [`pipeline::handoff`], without a user line.
    RequestHandoff,
    /// An operator closes an escalated session.
    Resolve,
    /// The session's escalation was announced to operators (the object, as an operator).
    Announced,
    /// The owner deletes the session.
    Delete,
}

/// The session as clients see it (no owner, no lease).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    /// Its id.
    pub id: String,
    /// When it started.
    pub created_at: u64,
    /// When it last changed.
    pub updated_at: u64,
    /// Whether a person is needed.
    pub status: SessionStatus,
    /// Where the dialog stands.
    pub dialog_state: Option<DialogState>,
    /// The pipeline's state (the clarification context among it).
    pub state: HelpState,
    /// The transcript.
    pub messages: Vec<HelpMessage>,
    /// The handoff.
    pub escalation: Option<Escalation>,
    /// The last answer offered a person.
    pub handoff_offered: bool,
    /// Turns that searched the knowledge base.
    pub search_calls: u32,
    /// Turns committed.
    pub turns: u32,
    /// The last clarifying question, in the shape every interrupt has (open while it waits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt: Option<Interrupt>,
}

impl HelpSession {
    /// The client's view.
    pub fn view(&self) -> SessionView {
        SessionView {
            id: self.id.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            status: self.status,
            dialog_state: self.state.dialog_state,
            state: self.state.clone(),
            messages: self.messages.clone(),
            escalation: self.escalation.clone(),
            handoff_offered: self.handoff_offered,
            search_calls: self.search_calls,
            turns: self.turns,
            interrupt: interrupt_of(self.question.as_ref()),
        }
    }
}

/// The reply to a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelpReply {
    /// The session after the command.
    pub session: SessionView,
    /// This command handed the session to a person.
    pub escalated: bool,
    /// The number a `Begin` gave its turn (turns begun so far, this one included), by which its
    /// events are numbered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub begun: Option<u32>,
}

/// A handled command: the record to save (`None`: unchanged), whether to erase it, the reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Handled {
    /// The new record.
    pub record: Option<HelpSession>,
    /// Erase the session (a first turn given up, or the owner deleted it).
    pub erase: bool,
    /// The reply.
    pub reply: HelpReply,
}

/// Handles `command` of `caller` on session `id` (`record`: `None` when it does not exist).
/// Another owner's session answers [`HelpError::NotFound`], as a missing one does.
///
/// ```
/// use stepwise_core::help::{Caller, HelpCommand, handle};
/// let begin = HelpCommand::Begin { lease_id: "t1".into(), lease_ms: 1000, create: true };
/// let made = handle(None, "s1", &Caller::Owner("o1".into()), &begin, 5).unwrap();
/// let record = made.record.unwrap();
/// assert_eq!(record.owner, "o1");
/// let stranger = handle(Some(&record), "s1", &Caller::Owner("o2".into()), &HelpCommand::Read, 6);
/// assert_eq!(stranger.unwrap_err().code(), "help_session_not_found");
/// let again = handle(Some(&record), "s1", &Caller::Owner("o1".into()), &begin, 6);
/// assert_eq!(again.unwrap_err().code(), "turn_in_progress");
/// ```
pub fn handle(
    record: Option<&HelpSession>,
    id: &str,
    caller: &Caller,
    command: &HelpCommand,
    now: u64,
) -> Result<Handled, HelpError> {
    let visible = record.filter(|r| match caller {
        Caller::Owner(owner) => &r.owner == owner,
        Caller::Operator => r.escalation.is_some(),
    });
    match (visible, command, caller) {
        (
            None,
            HelpCommand::Begin {
                lease_id,
                lease_ms,
                create: true,
            },
            Caller::Owner(owner),
        ) if record.is_none() => {
            let fresh = HelpSession {
                id: id.to_owned(),
                owner: owner.clone(),
                created_at: now,
                updated_at: now,
                state: HelpState::default(),
                messages: Vec::new(),
                status: SessionStatus::Open,
                escalation: None,
                handoff_offered: false,
                search_calls: 0,
                turns: 0,
                begun: 1,
                lease: Some(Lease {
                    id: lease_id.clone(),
                    until: now.saturating_add(*lease_ms),
                }),
                question: None,
            };
            Ok(begun(fresh))
        }
        (None, _, _) => Err(HelpError::NotFound),
        (Some(session), command, caller) => on_session(session, command, caller, now),
    }
}

fn on_session(
    session: &HelpSession,
    command: &HelpCommand,
    caller: &Caller,
    now: u64,
) -> Result<Handled, HelpError> {
    let owner = matches!(caller, Caller::Owner(_));
    let held = session.lease.as_ref().is_some_and(|l| l.until > now);
    let mut next = session.clone();
    match command {
        HelpCommand::Read => Ok(unchanged(session)),
        HelpCommand::Begin {
            lease_id, lease_ms, ..
        } if owner => {
            open(session)?;
            if session.turns >= MAX_TURNS {
                return Err(HelpError::Full(MAX_TURNS as usize));
            }
            if held {
                return Err(HelpError::TurnInProgress);
            }
            next.begun = session.begun.max(session.turns).saturating_add(1);
            next.lease = Some(Lease {
                id: lease_id.clone(),
                until: now.saturating_add(*lease_ms),
            });
            Ok(begun(next))
        }
        HelpCommand::Commit { lease_id, turn } if owner => {
            let ours = session
                .lease
                .as_ref()
                .is_some_and(|l| &l.id == lease_id && l.until > now);
            if !ours {
                return Err(HelpError::LeaseExpired);
            }
            open(session)?;
            let escalated = commit(&mut next, turn, now);
            Ok(changed(next, escalated))
        }
        HelpCommand::Release { lease_id } if owner => {
            if session.lease.as_ref().is_none_or(|l| &l.id != lease_id) {
                return Ok(unchanged(session));
            }
            next.lease = None;
            let mut handled = changed(next, false);
            handled.erase = session.messages.is_empty();
            Ok(handled)
        }
        HelpCommand::RequestHandoff if owner => match session.status {
            // A person has it already: nothing changes but a question waiting, which is skipped
            // as a typed request would skip it.
            SessionStatus::Escalated => match next.question.as_mut() {
                Some(question) if question.lifecycle.is_open() => {
                    question.close_by_user(HANDED_OVER, now);
                    next.updated_at = now;
                    Ok(changed(next, false))
                }
                _ => Ok(unchanged(session)),
            },
            SessionStatus::Resolved => Err(HelpError::Closed),
            SessionStatus::Open if held => Err(HelpError::TurnInProgress),
            SessionStatus::Open => {
                let outcome = pipeline::handoff(&session.state);
                if let Some(question) = next.question.as_mut() {
                    question.settle(&session.state, &outcome.state, HANDED_OVER, now);
                }
                next.messages.push(desk_line(&outcome, now));
                next.state = outcome.state;
                next.handoff_offered = false;
                next.updated_at = now;
                if let Some(reason) = outcome.escalate {
                    hand_over(&mut next, reason, now);
                }
                Ok(changed(next, outcome.escalate.is_some()))
            }
        },
        HelpCommand::Announced if !owner => {
            match next.escalation.as_mut() {
                Some(escalation) if !escalation.announced => escalation.announced = true,
                _ => return Ok(unchanged(session)),
            }
            Ok(changed(next, false))
        }
        HelpCommand::Delete if owner => {
            let mut handled = unchanged(session);
            handled.erase = true;
            Ok(handled)
        }
        HelpCommand::Resolve if !owner => {
            if session.status != SessionStatus::Escalated {
                return Err(HelpError::NotEscalated);
            }
            next.status = SessionStatus::Resolved;
            if let Some(escalation) = next.escalation.as_mut() {
                escalation.resolved_at = Some(now);
            }
            // The session takes no more turns: a question still waiting is never answered.
            if let Some(question) = next.question.as_mut() {
                question.close(SESSION_CLOSED, now);
            }
            next.updated_at = now;
            Ok(changed(next, false))
        }
        // An operator cannot speak for the owner, nor an owner resolve: as if missing.
        _ => Err(HelpError::NotFound),
    }
}

/// Whether the session takes turns: open, or with a person (who replies in it meanwhile).
fn open(session: &HelpSession) -> Result<(), HelpError> {
    match session.status {
        SessionStatus::Open | SessionStatus::Escalated => Ok(()),
        SessionStatus::Resolved => Err(HelpError::Closed),
    }
}

/// Keeps a turn; answers whether it handed the session to a person.
fn commit(next: &mut HelpSession, turn: &TurnRecord, now: u64) -> bool {
    let mut reply: String = turn.reply.chars().take(MAX_STORED_REPLY_CHARS).collect();
    if reply.len() < turn.reply.len() {
        reply.push('…');
    }
    next.messages.push(HelpMessage {
        role: Speaker::User,
        text: turn.message.clone(),
        at: now,
        question: None,
        footer: None,
        doc: None,
        trace: Vec::new(),
    });
    next.messages.push(HelpMessage {
        role: Speaker::Desk,
        text: reply,
        at: now,
        question: turn.question.clone(),
        footer: turn.footer.clone(),
        doc: turn.source.clone(),
        trace: turn.trace.clone(),
    });
    if let Some(question) = next.question.as_mut() {
        // A request for a person goes through the router's handoff, whether or not a person
        // already has the session.
        let reason = match turn.trace.contains(&Node::Handoff) {
            true => HANDED_OVER,
            false => NOT_ANSWERED,
        };
        question.settle(&next.state, &turn.state, reason, now);
    }
    next.turns += 1;
    if let Some(question) = &turn.question {
        let mut asked = QuestionWait::asked(&next.id, next.turns, question.clone(), now);
        if next.turns >= MAX_TURNS {
            // No turn can answer it: the session takes no more.
            asked.close(SESSION_FULL, now);
        }
        next.question = Some(asked);
    }
    next.state = turn.state.clone();
    next.search_calls += u32::from(turn.searched);
    next.handoff_offered = turn.offer_handoff;
    next.lease = None;
    next.updated_at = now;
    match turn.escalate {
        Some(reason) if next.status == SessionStatus::Open => {
            hand_over(next, reason, now);
            true
        }
        _ => false,
    }
}

/// Why an open question was skipped by a handoff (the button, or a typed request).
const HANDED_OVER: &str = "the user asked for a person";
/// Why an open question was skipped when an operator closed the session.
const SESSION_CLOSED: &str = "the session was closed";
/// Why a question asked by a session's last turn was skipped at once.
const SESSION_FULL: &str = "the session reached its limit of turns";
/// Why an open question was skipped by a turn that did not answer it.
const NOT_ANSWERED: &str = "the next message did not answer it";

/// The desk's line of a reply that is not a turn's (the handoff button's).
fn desk_line(outcome: &Outcome, now: u64) -> HelpMessage {
    HelpMessage {
        role: Speaker::Desk,
        text: outcome.reply.clone(),
        at: now,
        question: None,
        footer: outcome.footer.clone(),
        doc: None,
        trace: outcome.trace.clone(),
    }
}

fn hand_over(next: &mut HelpSession, reason: EscalationReason, now: u64) {
    next.status = SessionStatus::Escalated;
    let state = &next.state;
    next.escalation = Some(Escalation {
        at: now,
        reason,
        resolved_at: None,
        announced: false,
        query: state.original_query.clone(),
        doc: state.doc.clone(),
        answers: state
            .clarification_context
            .as_ref()
            .map(|c| c.answers.clone())
            .unwrap_or_default(),
    });
    next.state.dialog_state = Some(DialogState::Escalated);
    next.state.handed_over = true;
    next.state.pending_handoff = false;
    next.handoff_offered = false;
    next.updated_at = now;
}

fn changed(next: HelpSession, escalated: bool) -> Handled {
    Handled {
        reply: HelpReply {
            session: next.view(),
            escalated,
            begun: None,
        },
        record: Some(next),
        erase: false,
    }
}

/// A turn begun: the record, and the number its reply gives the turn.
fn begun(next: HelpSession) -> Handled {
    let number = next.begun;
    let mut handled = changed(next, false);
    handled.reply.begun = Some(number);
    handled
}

fn unchanged(session: &HelpSession) -> Handled {
    Handled {
        record: None,
        erase: false,
        reply: HelpReply {
            session: session.view(),
            escalated: false,
            begun: None,
        },
    }
}

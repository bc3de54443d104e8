//! The help desk (clarification-loop.md): a question is searched in a knowledge base; when the
//! best article carries clarifying questions, the conversation asks them one at a time, storing
//! each answer verbatim and never searching while the loop is active; then it answers from the
//! article and the answers. When the article says a person is needed, the answer comes first and
//! offers one; a request for a person ("I want to talk to a person") is recognised by the router
//! and hands the session over at once, as the "Talk to a person" button does.
//!
//! Everything here is sans-IO. The knowledge base's articles and their checks ([`doc`]), the
//! words of a question, its search query, its language and what it asks of the desk itself
//! ([`text`]), ranking and fusion of
//! search results ([`search`]), the prompts and the offline provider's answers ([`prompt`]),
//! the turn's pipeline as a machine of nodes that ask for effects ([`pipeline`]), the session
//! record its Durable Object keeps ([`session`]) and its clarifying question as an interrupt
//! ([`question`]).

pub mod doc;
pub mod pipeline;
pub mod prompt;
pub mod question;
pub mod search;
pub mod session;
pub mod text;

pub use doc::{HelpDoc, read_import};
pub use pipeline::{
    ClarificationContext, DialogState, Effect, EscalationReason, HelpState, Input, Node, Outcome,
    Pipeline, Step,
};
pub use search::{Candidate, Ranked, Thresholds, fuse};
pub use session::{Caller, HelpCommand, HelpReply, HelpSession, SessionStatus, handle};

/// Longest question or answer a user may send, in characters.
pub const MAX_MESSAGE_CHARS: usize = 2000;

/// Why a help-desk request was refused. Nothing changed when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HelpError {
    /// The message is empty or only white space.
    #[error("the message is empty")]
    EmptyMessage,
    /// The message is longer than [`MAX_MESSAGE_CHARS`].
    #[error("the message has {0} characters; at most {MAX_MESSAGE_CHARS} are accepted")]
    MessageTooLong(usize),
    /// An article (or an import) that is not acceptable, with the reason.
    #[error("{0}")]
    InvalidDoc(String),
    /// No such session for this caller (another owner's session answers the same).
    #[error("no such help session")]
    NotFound,
    /// Another turn of this session is running.
    #[error("another turn of this session is in progress; try again when it has finished")]
    TurnInProgress,
    /// The turn's hold on the session expired before it committed.
    #[error("this turn took too long and was given up; send the message again")]
    LeaseExpired,
    /// The session was closed by an operator.
    #[error("this session is closed; start a new session for a new question")]
    Closed,
    /// The session holds its most turns.
    #[error("this session has reached its limit of {0} turns; start a new session")]
    Full(usize),
    /// An operator command on a session that is not escalated.
    #[error("this session is not waiting for a person")]
    NotEscalated,
}

impl HelpError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            HelpError::EmptyMessage => "empty_message",
            HelpError::MessageTooLong(_) => "message_too_long",
            HelpError::InvalidDoc(_) => "invalid_doc",
            HelpError::NotFound => "help_session_not_found",
            HelpError::TurnInProgress => "turn_in_progress",
            HelpError::LeaseExpired => "lease_expired",
            HelpError::Closed => "session_closed",
            HelpError::Full(_) => "session_full",
            HelpError::NotEscalated => "not_escalated",
        }
    }
}

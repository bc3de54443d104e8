//! An assistant turn's hold on its conversation: begun on the conversation's Durable Object
//! (a new conversation gets a fresh id), or resumed once its context request allows, then
//! committed with its messages (and the owner's list entry rewritten), deferred with its
//! context request, or given up. A turn an approval begins runs the approved call first.

use stepwise_core::conversation::{Command, Conversation, Entry, Reply, Waiting};
use stepwise_core::handshake::ContextRequest;
use stepwise_core::protocol::ChatMessage;
use worker::Env;

use crate::conversations::{client, index};
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;

/// A turn begun on a conversation.
pub struct Session {
    /// The conversation's id.
    pub id: String,
    /// The owner's id.
    pub owner: String,
    /// The turn's lease on the object.
    pub lease: u32,
    /// The conversation before this turn.
    pub before: Conversation,
    /// The deferred turn's request, when this turn resumes one.
    pub resumed: Option<ContextRequest>,
}

/// What a turn commits besides its messages.
#[derive(Default)]
pub struct Extras {
    /// Requests the turn made and resolved itself.
    pub requests: Vec<ContextRequest>,
    /// The writing style it used.
    pub writing_style: Option<String>,
}

impl Session {
    /// Begins a turn on conversation `id` of `owner` (a new conversation, whose id the server
    /// just made, when `start`), titled from `message` when new. 404 for another owner's or a missing conversation, 409 while
    /// another turn runs, while a message waits for context, or when the conversation is full.
    pub async fn begin(
        env: &Env,
        owner: &Owner,
        id: &str,
        start: bool,
        message: &str,
        lease_ms: u64,
    ) -> AppResult<Session> {
        let id = id.to_owned();
        let command = Command::BeginAssistant {
            message: message.to_owned(),
            start,
            lease_ms,
        };
        match client::send(env, &id, &owner.id, &command).await? {
            Reply::Begun {
                lease,
                conversation,
                ..
            } => Ok(Session {
                id,
                owner: owner.id.clone(),
                lease,
                before: *conversation,
                resumed: None,
            }),
            _ => Err(other_reply()),
        }
    }

    /// Approves `approval_id` (with the owner's `arguments` when edited) and begins the turn that
    /// runs its call, in one step on the conversation's object: the approval is stored approved
    /// before the call can run. 409 `approval_settled` or `approval_expired` when it was
    /// decided already or is past its deadline.
    pub async fn begin_approved(
        env: &Env,
        owner: &Owner,
        id: &str,
        approval_id: &str,
        arguments: Option<serde_json::Value>,
        lease_ms: u64,
    ) -> AppResult<Session> {
        let command = Command::BeginApproved {
            approval_id: approval_id.to_owned(),
            arguments,
            by: decider(owner),
            lease_ms,
        };
        match client::send(env, id, &owner.id, &command).await? {
            Reply::Begun {
                lease,
                conversation,
                ..
            } => Ok(Session {
                id: id.to_owned(),
                owner: owner.id.clone(),
                lease,
                before: *conversation,
                resumed: None,
            }),
            _ => Err(other_reply()),
        }
    }

    /// Keeps what the approved call returned on its approval (as soon as it returned, so a turn
    /// that fails afterwards still shows it).
    pub async fn ran(&self, env: &Env, approval_id: &str, output: &str, is_error: bool) {
        let command = Command::ApprovalRan {
            approval_id: approval_id.to_owned(),
            lease: self.lease,
            output: output.to_owned(),
            is_error,
        };
        if let Err(error) = client::send(env, &self.id, &self.owner, &command).await {
            worker::console_warn!("conversation {}: approval result: {error}", self.id);
        }
    }

    /// Begins the deferred turn of `request_id`: the session, and what the user had asked.
    pub async fn resume(
        env: &Env,
        owner: &str,
        id: &str,
        request_id: &str,
        lease_ms: u64,
    ) -> AppResult<(Session, Waiting)> {
        let command = Command::BeginResume {
            request_id: request_id.to_owned(),
            lease_ms,
        };
        match client::send(env, id, owner, &command).await? {
            Reply::Resumed {
                lease,
                conversation,
                request,
                waiting,
            } => Ok((
                Session {
                    id: id.to_owned(),
                    owner: owner.to_owned(),
                    lease,
                    before: *conversation,
                    resumed: Some(*request),
                },
                *waiting,
            )),
            _ => Err(other_reply()),
        }
    }

    /// The conversation so far as the model reads it (within `budget` characters, a long
    /// conversation's earlier messages in a digest).
    pub fn history(&self, budget: usize) -> Vec<ChatMessage> {
        self.before.model_history(budget)
    }

    /// Whether nobody can be watching yet (a conversation's first turn: its id is not known).
    pub fn is_new(&self) -> bool {
        self.before.message_count() == 0
    }

    /// Commits the turn's messages, then rewrites the owner's list entry; the stored answer's
    /// index among the conversation's messages.
    pub async fn commit(&self, env: &Env, entries: Vec<Entry>, extras: Extras) -> AppResult<usize> {
        let command = Command::CommitAssistant {
            lease: self.lease,
            entries,
            resumed: self.resumed.as_ref().map(|r| r.request_id.clone()),
            requests: extras.requests,
            writing_style: extras.writing_style,
        };
        let reply = client::send(env, &self.id, &self.owner, &command).await?;
        let answer = match &reply {
            Reply::Conversation(record) => record.message_count().saturating_sub(1),
            _ => return Err(other_reply()),
        };
        self.list(env, reply).await;
        Ok(answer)
    }

    /// Stores the user's message as waiting for `request` (the lease ends).
    pub async fn defer(
        &self,
        env: &Env,
        entry: Entry,
        request: ContextRequest,
        waiting: Waiting,
    ) -> AppResult<()> {
        let command = Command::Defer {
            lease: self.lease,
            entry: Box::new(entry),
            request: Box::new(request),
            waiting: Box::new(waiting),
        };
        let reply = client::send(env, &self.id, &self.owner, &command).await?;
        self.list(env, reply).await;
        Ok(())
    }

    async fn list(&self, env: &Env, reply: Reply) {
        if let Reply::Conversation(record) = reply {
            let ttl_seconds = client::retention_ms(env) / 1000;
            let written = match Kv::new(env) {
                Ok(kv) => index::write(&kv, &record, ttl_seconds).await,
                Err(error) => Err(error),
            };
            if let Err(error) = written {
                worker::console_warn!("conversation {}: list entry not written: {error}", self.id);
            }
        }
    }

    /// Gives the turn up: nothing of it is kept (a first turn takes its conversation along; a
    /// resumed turn's message keeps waiting).
    pub async fn abort(&self, env: &Env) {
        let command = Command::Abort { lease: self.lease };
        if let Err(error) = client::send(env, &self.id, &self.owner, &command).await {
            worker::console_warn!("conversation {}: abort: {error}", self.id);
        }
    }
}

/// Who decides an approval, as its record says: the owner's email, or `owner`.
pub fn decider(owner: &Owner) -> String {
    owner.email.clone().unwrap_or_else(|| "owner".to_owned())
}

fn other_reply() -> AppError {
    AppError::internal(&"the conversation answered another kind of reply")
}

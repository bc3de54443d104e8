//! What an owner has, section by section, for their export and erase: each section is one of
//! the owner's KV lists (research jobs, streams, assistant and guided conversations, help
//! sessions), whose keys name the items; an item is read and erased through its own object or
//! record, as its owner, so nothing here can reach another owner's data.

use serde_json::Value;
use stepwise_core::conversation::{Command as ConversationCommand, Reply};
use stepwise_core::help::{Caller as HelpCaller, HelpCommand};
use stepwise_core::research::{Caller as ResearchCaller, Command as ResearchCommand};
use worker::Env;

use crate::conversations::{client as conversations, index as conversation_index};
use crate::help::{client as help, index as help_index};
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::{Kv, Listing, OwnerList};
use crate::platform::owner::Owner;
use crate::research::client::{self as research, JobRequest};
use crate::research::index as research_index;
use crate::streams::store as streams;

/// One kind of item an owner has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Research jobs, drafts included (with their reports and syntheses).
    Research,
    /// Saved streams, each with its kept literature.
    Streams,
    /// Assistant conversations (messages, context requests and their supplies, approvals).
    AssistantConversations,
    /// Guided-workflow conversations.
    GuidedConversations,
    /// Help-desk sessions with their transcripts.
    HelpSessions,
}

impl Section {
    /// Every section, in the order an export lists them and an erase empties them.
    pub const ALL: [Section; 5] = [
        Section::Research,
        Section::Streams,
        Section::AssistantConversations,
        Section::GuidedConversations,
        Section::HelpSessions,
    ];

    /// The section's name in the export document and in `?section=`.
    pub fn name(self) -> &'static str {
        match self {
            Section::Research => "research",
            Section::Streams => "streams",
            Section::AssistantConversations => "assistant_conversations",
            Section::GuidedConversations => "guided_conversations",
            Section::HelpSessions => "help_sessions",
        }
    }

    /// The section named `name`.
    pub fn parse(name: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|s| s.name() == name)
    }

    fn list(self) -> &'static OwnerList {
        match self {
            Section::Research => &research_index::LIST,
            Section::Streams => &streams::LIST,
            Section::AssistantConversations => &conversation_index::LIST,
            Section::GuidedConversations => &conversation_index::GUIDED,
            Section::HelpSessions => &help_index::LIST,
        }
    }

    /// A page of the owner's list keys of this section, newest first.
    pub async fn keys(
        self,
        kv: &Kv,
        owner: &Owner,
        limit: u64,
        cursor: Option<String>,
    ) -> AppResult<Listing<String>> {
        self.list().key_page(kv, &owner.id, limit, cursor).await
    }

    /// The item a list key names, whole, as its owner reads it; `None` when it is gone (its
    /// entry outlived it for a moment).
    pub async fn read(
        self,
        env: &Env,
        kv: &Kv,
        owner: &Owner,
        key: &str,
    ) -> AppResult<Option<Value>> {
        let id = OwnerList::id_in(key);
        let read = match self {
            Section::Research => crate::research::read_owned(env, owner, id).await,
            Section::Streams => read_stream(kv, owner, id).await,
            Section::AssistantConversations | Section::GuidedConversations => {
                match conversations::send(env, id, &owner.id, &ConversationCommand::Export).await {
                    Ok(Reply::Conversation(record)) => Ok(Some(serde_json::to_value(record)?)),
                    Ok(_) => Err(AppError::internal(&"a conversation answered another reply")),
                    Err(error) => Err(error),
                }
            }
            Section::HelpSessions => {
                let caller = HelpCaller::Owner(owner.id.clone());
                match help::send(env, id, caller, HelpCommand::Read).await {
                    Ok(reply) => Ok(Some(serde_json::to_value(reply.session)?)),
                    Err(error) => Err(error),
                }
            }
        };
        match read {
            Err(error) if error.status() == 404 => Ok(None),
            read => read,
        }
    }

    /// Erases the item a list key names (and what it keeps elsewhere: share pages, literature,
    /// operator listings), then the key itself; an item already gone is not an error.
    pub async fn erase(self, env: &Env, kv: &Kv, owner: &Owner, key: &str) -> AppResult<()> {
        let id = OwnerList::id_in(key);
        let erased = match self {
            Section::Research => erase_job(env, owner, id).await,
            Section::Streams => match streams::load(kv, &owner.id, id).await? {
                Some(stream) if stream.owner == owner.id => streams::delete(kv, &stream).await,
                // The record is gone; literature kept for it is deleted all the same.
                _ => kv.delete(&streams::literature_key(&owner.id, id)).await,
            },
            Section::AssistantConversations | Section::GuidedConversations => {
                conversations::send(env, id, &owner.id, &ConversationCommand::Erase)
                    .await
                    .map(|_| ())
            }
            Section::HelpSessions => {
                let caller = HelpCaller::Owner(owner.id.clone());
                help::send(env, id, caller, HelpCommand::Delete)
                    .await
                    .map(|_| ())
            }
        };
        match erased {
            Err(error) if error.status() != 404 => Err(error),
            _ => kv.delete(key).await,
        }
    }
}

/// Deletes the job (its object erases its share page and list entry).
async fn erase_job(env: &Env, owner: &Owner, id: &str) -> AppResult<()> {
    let caller = ResearchCaller::Owner(owner.id.clone());
    let delete = JobRequest::Apply(&ResearchCommand::Delete);
    let mut answer = research::send(env, id, &caller, delete).await?;
    match answer.status_code() {
        200 | 204 | 404 => Ok(()),
        status => Err(AppError::relayed(status, &answer.text().await?)),
    }
}

/// The stream's view with its kept literature (`null` when none was kept).
async fn read_stream(kv: &Kv, owner: &Owner, id: &str) -> AppResult<Option<Value>> {
    let Some(stream) = streams::load(kv, &owner.id, id)
        .await?
        .filter(|s| s.owner == owner.id)
    else {
        return Ok(None);
    };
    let mut view = serde_json::to_value(stream.view())?;
    let literature: Option<Value> = kv.json(&streams::literature_key(&owner.id, id)).await?;
    view["literature"] = literature.unwrap_or(Value::Null);
    Ok(Some(view))
}

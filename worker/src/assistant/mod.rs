//! The page-aware assistant (chat-architecture.md) at the edge: `POST /api/assistant` (a turn:
//! SSE by default, one JSON answer with `Accept: application/json`), `POST
//! /api/assistant/actions` (a server action, answered as a turn), the owner's conversations
//! (`GET /api/assistant/conversations`, `GET`/`DELETE /api/assistant/conversations/:id`) and the
//! registry browsers resolve pages with (`GET /api/assistant/registry`). Conversations are
//! server-held, one Durable Object each, one turn at a time (409 `turn_in_progress`). A turn
//! may be deferred until context it asked for arrives (`crate::handshake`); [`resume`] runs it
//! then. A turn may end with a tool call held for the owner's approval; deciding it
//! ([`approvals`]) runs the call once, in a turn of its own.

mod actions;
pub mod approvals;
mod approved;
pub mod cards;
pub mod deferred;
pub mod host;
pub mod log_header;
mod session;
mod tools;
mod turn;

use std::time::Duration;

use stepwise_core::agent::AgentLimits;
use stepwise_core::conversation::{Command, MAX_PAGE_MESSAGES, Reply};
use stepwise_core::handshake::{
    PromptSheet, RequestStatus, SlotState, Urgency, carried, classify, mode_of,
};
use stepwise_core::llm::ProviderConfig;
use stepwise_core::protocol::{AssistantActionRequest, AssistantRequest};
use stepwise_core::registry::ChatContext;
use worker::{Env, Request, Response};

use serde::{Deserialize, Serialize};

use self::host::{DeliveryOrder, Ordered, TurnOrder};
use self::session::Session;
use self::turn::{Ask, AssistantTurn, Handshake};
use crate::conversations::{client, index};
use crate::handshake::{sheets, sources};
use crate::platform::body::read_json;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::platform::negotiate::Delivery;
use crate::platform::owner::Owner;
use crate::platform::settings::{Settings, number};
use crate::platform::warm;
use crate::registry::{registry, registry_json};
use crate::streams;

/// Default longest turn, in ms (`ASSISTANT_TURN_MS`).
const DEFAULT_TURN_MS: u64 = 300_000;
/// Default longest tool run, in ms (`TOOL_TIMEOUT_MS`).
const DEFAULT_TOOL_TIMEOUT_MS: u64 = 30_000;
/// How long a turn holds its conversation beyond its own deadline.
const LEASE_MARGIN_MS: u64 = 30_000;

/// Longest action label, in characters (a button's text).
const MAX_LABEL_CHARS: usize = 200;

/// `text` trimmed, refused (422) when empty or longer than `max_chars` characters.
fn checked_text(field: &str, text: &str, max_chars: usize) -> AppResult<String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AppError::invalid_request(format!("`{field}` is empty")));
    }
    if text.chars().count() > max_chars {
        return Err(AppError::invalid_request(format!(
            "`{field}` is longer than {max_chars} characters"
        )));
    }
    Ok(text.to_owned())
}

/// `GET /api/assistant/registry`: the payload types, tools, actions and pages, as JSON.
pub fn get_registry() -> AppResult<Response> {
    let mut response = Response::ok(registry_json())?;
    response
        .headers_mut()
        .set("content-type", "application/json")?;
    Ok(response)
}

/// `POST /api/assistant`: a turn with `{conversation_id?, message, context}`.
pub async fn post(mut req: Request, env: Env, owner: &Owner) -> AppResult<Response> {
    let reply = Delivery::of(&req)?;
    let body: AssistantRequest = read_json(&mut req).await?;
    let message = AssistantMessage {
        conversation_id: body.conversation_id,
        message: body.message,
        context: body.context,
        provider: body.provider,
        writing_style: body.writing_style,
    };
    post_message(message, reply, env, owner).await
}

/// A message for the assistant, from `POST /api/assistant` or an AG-UI run.
pub struct AssistantMessage {
    /// The conversation to continue; a new one when `None`.
    pub conversation_id: Option<String>,
    /// The message.
    pub message: String,
    /// The page context, checked here.
    pub context: serde_json::Value,
    /// A provider name.
    pub provider: Option<String>,
    /// A writing style (a prompt sheet's).
    pub writing_style: Option<String>,
}

/// Runs an assistant turn on `message`, answered as `reply` asks.
pub async fn post_message(
    message: AssistantMessage,
    reply: Delivery,
    env: Env,
    owner: &Owner,
) -> AppResult<Response> {
    let settings = Settings::from_env(&env)?;
    let text = checked_text("message", &message.message, settings.max_message_chars)?;
    let asked = Asked {
        title: text.clone(),
        ask: Ask::Message(text),
        context: message.context,
        provider: message.provider,
        writing_style: message.writing_style,
    };
    start(reply, env, owner, message.conversation_id, asked).await
}

/// `POST /api/assistant/actions`: a server action `{conversation_id?, action, target?, label?,
/// context}` the page offers, answered as a turn.
pub async fn post_action(mut req: Request, env: Env, owner: &Owner) -> AppResult<Response> {
    let reply = Delivery::of(&req)?;
    let body: AssistantActionRequest = read_json(&mut req).await?;
    if registry().server_action(&body.action).is_none() {
        return Err(AppError::invalid_request(format!(
            "there is no server action `{:.64}`",
            body.action
        )));
    }
    actions::check(&body.action, body.target.as_deref())?;
    let label = match body.label.as_deref().filter(|l| !l.trim().is_empty()) {
        Some(label) if label.contains(['\n', '\r']) => {
            return Err(AppError::invalid_request("`label` is one line"));
        }
        Some(label) => checked_text("label", label, MAX_LABEL_CHARS)?,
        None => body.action.clone(),
    };
    let asked = Asked {
        title: label.clone(),
        ask: Ask::Action {
            action: body.action,
            label,
            target: body.target,
        },
        context: body.context,
        provider: None,
        writing_style: None,
    };
    start(reply, env, owner, body.conversation_id, asked).await
}

/// What a request asks of a turn: a message or a server action, from which page.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Asked {
    /// The new conversation's title (the message, or the action's label).
    title: String,
    ask: Ask,
    /// The page's `ChatContext`, checked by `prepare`.
    context: serde_json::Value,
    /// The provider named by the request; the chat provider when `None`.
    provider: Option<String>,
    /// The writing style asked for (a prompt-sheet style).
    writing_style: Option<String>,
}

impl Asked {
    /// Whether the turn continues the client's last answer: an approved call's run.
    pub(crate) fn continues(&self) -> bool {
        matches!(self.ask, Ask::Approve { .. })
    }

    /// Checks what the turn is refused for whatever its conversation holds, in the order
    /// [`prepare`] checks it: the page context (422), the provider (422 `unknown_provider`), the
    /// stream in view (404) and the writing style (422). A message that would wait behind a
    /// running turn is checked with this before it waits, so it is refused at once rather than
    /// when its turn begins.
    pub(crate) async fn checked_alone(&self, env: &Env, owner: &Owner) -> AppResult<()> {
        let context = ChatContext::from_value(self.context.clone())?;
        provider_of(&Settings::from_env(env)?, self.provider.as_deref())?;
        if let Some(id) = &context.stream_id {
            streams::find(&Kv::new(env)?, owner, id).await?;
        }
        sheet_of(env, &self.ask, &context, self.writing_style.as_deref()).await?;
        Ok(())
    }
}

/// The provider a request names, or the chat provider; 422 `unknown_provider` otherwise.
fn provider_of<'a>(settings: &'a Settings, named: Option<&str>) -> AppResult<&'a ProviderConfig> {
    let provider = settings.providers.for_chat(named);
    provider.ok_or_else(|| AppError::unknown_provider(named.unwrap_or("")))
}

/// The prompt sheet of a turn asking `ask` on the page of `context`, which must offer the
/// `writing_style` asked for, if any (422 otherwise, naming the styles it offers).
async fn sheet_of(
    env: &Env,
    ask: &Ask,
    context: &ChatContext,
    writing_style: Option<&str>,
) -> AppResult<PromptSheet> {
    let mode = match ask {
        Ask::Message(message) => mode_of(classify(message)),
        Ask::Action { .. } | Ask::Approve { .. } => "action",
    };
    let sheet = sheets::for_turn(env, &context.current_page, mode).await;
    if let Some(style) = writing_style
        && !sheet.styles().any(|s| s == style)
    {
        let styles: Vec<&str> = sheet.styles().collect();
        return Err(AppError::invalid_request(format!(
            "`writing_style` is one of {}",
            styles.join(", ")
        )));
    }
    Ok(sheet)
}

/// Checks the context and the stream in view and begins the turn on conversation `id` (a new
/// one when `start`): the turn, ready to run. Called by the conversation's object, which hosts
/// the turn ([`host`]).
pub(crate) async fn prepare(
    env: Env,
    owner: &Owner,
    id: &str,
    start: bool,
    asked: Asked,
) -> AppResult<AssistantTurn> {
    let settings = Settings::from_env(&env)?;
    let Asked {
        title,
        ask,
        context,
        provider,
        writing_style,
    } = asked;
    let raw_context = context.clone();
    let context = ChatContext::from_value(context)?;
    let provider_name = provider.clone();
    let provider = provider_of(&settings, provider.as_deref())?.clone();
    let stream = match &context.stream_id {
        Some(id) => Some(streams::find(&Kv::new(&env)?, owner, id).await?),
        None => None,
    };
    let sheet = sheet_of(&env, &ask, &context, writing_style.as_deref()).await?;
    let loaded = sources::load(&env, owner, stream, context.report_id.as_deref(), false).await?;
    let turn_ms = number(&env, "ASSISTANT_TURN_MS").unwrap_or(DEFAULT_TURN_MS);
    let lease_ms = turn_ms + LEASE_MARGIN_MS;
    let session = match &ask {
        Ask::Approve {
            approval_id,
            arguments,
            ..
        } => {
            let arguments = arguments.clone();
            Session::begin_approved(&env, owner, id, approval_id, arguments, lease_ms).await?
        }
        _ => Session::begin(&env, owner, id, start, &title, lease_ms).await?,
    };
    let writing_style = writing_style.or_else(|| session.before.writing_style.clone());
    let mut handshake = Handshake::new(sheet, writing_style, raw_context, provider_name);
    handshake.earlier = carried(&session.before.requests, None);
    Ok(AssistantTurn {
        limits: limits(&env),
        tool_timeout: Duration::from_millis(
            number(&env, "TOOL_TIMEOUT_MS").unwrap_or(DEFAULT_TOOL_TIMEOUT_MS),
        ),
        deadline_at: now_ms() + turn_ms,
        handshake,
        env,
        settings,
        owner: owner.clone(),
        provider,
        session,
        ask,
        context,
        loaded,
    })
}

/// Sends a turn to its conversation's object, which runs it ([`host`]) and answers as
/// `reply` asks; a new conversation gets a fresh id.
pub(super) async fn start(
    reply: Delivery,
    env: Env,
    owner: &Owner,
    conversation_id: Option<String>,
    asked: Asked,
) -> AppResult<Response> {
    let (conversation_id, start) = match conversation_id {
        Some(id) => (id, false),
        None => (warm::new_id(client::BINDING)?, true),
    };
    let order = TurnOrder {
        owner: owner.clone(),
        conversation_id,
        start,
        what: Ordered::Ask(Box::new(asked)),
        delivery: DeliveryOrder::of(reply),
    };
    host::send(&env, &order).await
}

fn limits(env: &Env) -> AgentLimits {
    AgentLimits {
        max_iterations: number(env, "ASSISTANT_MAX_ITERATIONS")
            .unwrap_or(AgentLimits::default().max_iterations),
        max_tool_calls: number(env, "ASSISTANT_MAX_TOOL_CALLS")
            .unwrap_or(AgentLimits::default().max_tool_calls),
    }
}

/// Begins the deferred turn of `request_id` on conversation `id` of `owner`, once its request
/// is ready, forced or fallen back; `warning` opens an answer given without what was asked for.
/// The turn, ready to run, and the request as it ended. Called by the conversation's object.
pub(crate) async fn prepare_resume(
    env: Env,
    owner: &Owner,
    id: &str,
    request_id: &str,
    warning: Option<&str>,
) -> AppResult<(AssistantTurn, stepwise_core::handshake::ContextRequest)> {
    let settings = Settings::from_env(&env)?;
    let turn_ms = number(&env, "ASSISTANT_TURN_MS").unwrap_or(DEFAULT_TURN_MS);
    let (session, waiting) =
        Session::resume(&env, &owner.id, id, request_id, turn_ms + LEASE_MARGIN_MS).await?;
    let request = session
        .resumed
        .clone()
        .ok_or_else(|| AppError::internal(&"a resumed turn without its request"))?;
    let skipped: Vec<&str> = request
        .slots
        .iter()
        .filter(|s| s.state == SlotState::Skipped && s.urgency == Urgency::Required)
        .map(|s| s.description.as_str())
        .collect();
    let warning = match request.status {
        RequestStatus::Forced | RequestStatus::FellBack => warning.map(str::to_owned),
        _ if !skipped.is_empty() => Some(format!(
            "Answered without what you skipped: {}.",
            skipped.join("; ")
        )),
        _ => None,
    };
    let loaded_context = ChatContext::from_value(waiting.context.clone());
    let context = match loaded_context {
        Ok(context) => context,
        Err(error) => {
            session.abort(&env).await;
            return Err(error.into());
        }
    };
    let provider = waiting
        .provider
        .as_deref()
        .and_then(|name| settings.providers.get(name))
        .unwrap_or_else(|| settings.providers.chat_provider())
        .clone();
    let kv = Kv::new(&env)?;
    let stream = match &context.stream_id {
        Some(stream_id) => streams::find(&kv, owner, stream_id).await.ok(),
        None => None,
    };
    let sheet = sheets::for_turn(
        &env,
        &context.current_page,
        mode_of(classify(&waiting.message)),
    )
    .await;
    let loaded = sources::load(&env, owner, stream, context.report_id.as_deref(), false).await?;
    let mut handshake = Handshake::new(
        sheet,
        session.before.writing_style.clone(),
        waiting.context.clone(),
        waiting.provider.clone(),
    );
    handshake.request = Some(request.clone());
    handshake.warning = warning;
    handshake.user_message_id = request.user_message_id.clone();
    handshake.earlier = carried(&session.before.requests, Some(&request.request_id));
    let turn = AssistantTurn {
        limits: limits(&env),
        tool_timeout: Duration::from_millis(
            number(&env, "TOOL_TIMEOUT_MS").unwrap_or(DEFAULT_TOOL_TIMEOUT_MS),
        ),
        deadline_at: now_ms() + turn_ms,
        handshake,
        settings,
        owner: owner.clone(),
        provider,
        session,
        ask: Ask::Message(waiting.message),
        context,
        loaded,
        env,
    };
    Ok((turn, request))
}

/// `GET /api/assistant/conversations`: the owner's conversations, newest first.
pub async fn list(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    index::LIST.respond(req, env, &owner.id).await
}

/// `GET /api/assistant/conversations/:id`: the messages, with their tools, payloads and
/// suggestions, oldest first, and everything its turns waited on as interrupts. With `limit`
/// (1 to `MAX_PAGE_MESSAGES`) and optionally `before`, a page: the newest `limit` messages
/// before index `before` (the end without it); `messages_from` is the page's first index and
/// `message_count` the whole conversation's.
pub async fn get(req: &Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let url = req.url()?;
    let number = |name: &str| -> AppResult<Option<u32>> {
        let Some((_, text)) = url.query_pairs().find(|(k, _)| k == name) else {
            return Ok(None);
        };
        text.parse::<u32>().map(Some).map_err(|_| {
            AppError::invalid_request(format!("`{name}` is a count of messages, not `{text:.32}`"))
        })
    };
    let (limit, before) = (number("limit")?, number("before")?);
    let command = match (limit, before) {
        (None, None) => Command::Read { token_hash: None },
        (Some(limit), before) if (1..=MAX_PAGE_MESSAGES as u32).contains(&limit) => {
            Command::ReadPage { before, limit }
        }
        (Some(_), _) => {
            return Err(AppError::invalid_request(format!(
                "`limit` is from 1 to {MAX_PAGE_MESSAGES} messages"
            )));
        }
        (None, Some(_)) => {
            return Err(AppError::invalid_request(
                "`before` pages back: send it with `limit`",
            ));
        }
    };
    let (record, message_count, interrupts) =
        match client::send(env, id, &owner.id, &command).await? {
            Reply::Conversation(record) => {
                let (count, interrupts) = (record.message_count(), record.interrupts());
                (record, count, interrupts)
            }
            Reply::Page {
                conversation,
                message_count,
                interrupts,
            } => (conversation, message_count, interrupts),
            _ => {
                return Err(AppError::internal(
                    &"the conversation answered another kind of reply",
                ));
            }
        };
    let mut view = record.summary();
    view["messages"] = serde_json::to_value(&record.entries)?;
    view["messages_from"] = record.entries_from.into();
    view["message_count"] = message_count.into();
    view["running"] = record.running.is_some().into();
    view["context_requests"] = serde_json::to_value(&record.requests)?;
    view["interrupts"] = serde_json::to_value(interrupts)?;
    view["waiting"] = record
        .waiting
        .as_ref()
        .map_or(serde_json::Value::Null, |w| w.request_id.clone().into());
    view["writing_style"] = record.writing_style.clone().into();
    Ok(Response::from_json(&view)?)
}

/// `DELETE /api/assistant/conversations/:id`: 204.
pub async fn delete(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    client::send(env, id, &owner.id, &Command::Delete).await?;
    Ok(Response::empty()?.with_status(204))
}

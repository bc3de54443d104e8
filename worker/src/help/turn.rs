//! One help-desk turn: `POST /api/help {session_id?, message}`. The edge checks the message and
//! sends the turn to the session's Durable Object (`POST /turn`), which runs it (`run`, in the
//! background: `super::live`). There the session grants the turn (creating the session on its
//! first message), the core's pipeline runs with its effects performed (the owner's answer cache
//! in KV, the knowledge base in D1, model calls through the gateway, charged to the spending
//! guard), and the outcome is committed. A failed model call, or a Stop, gives the turn up:
//! nothing of it is kept and the same question is still waiting.

use futures::future::{Either, select};
use serde::Deserialize;
use serde_json::{Value, json};
use stepwise_core::help::pipeline::{CachedAnswer, check_message};
use stepwise_core::help::prompt::{
    GENERATION_MAX_TOKENS, TRANSLATION_MAX_TOKENS, offline_answer, offline_translation,
};
use stepwise_core::help::session::TurnRecord;
use stepwise_core::help::{
    Caller, Effect, HelpCommand, HelpError, HelpState, Input, Outcome, Pipeline, SessionStatus,
    Step,
};
use stepwise_core::llm::{ModelCall, ProviderKind};
use stepwise_core::offline::OfflineAnswer;
use stepwise_core::owner::hex;
use stepwise_core::protocol::{ChatMessage, Role};
use stepwise_core::research::ProviderOutcome;
use stepwise_core::spend::{Charge, estimate_tokens};
use worker::{Env, Method, Request, RequestInit, Response, console_warn};

use super::client::{BINDING, ID_HEADER, TurnOrder};
use super::kb::Kb;
use super::live::{HelpRun, stopped_error};
use super::{client, search};
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids::{self, random_id};
use crate::platform::kv::Kv;
use crate::platform::negotiate::wants_json;
use crate::platform::owner::Owner;
use crate::platform::settings::{Settings, number};
use crate::platform::spend;
use crate::platform::{crypto, objects, warm};
use crate::provider::Gateway;

/// KV key of the knowledge base's version (changed by every import that changes an article),
/// part of every cache key, so an import retires cached answers at once.
pub const KB_VERSION_KEY: &str = "help:kb-version";
/// How long a cached answer lives without `HELP_CACHE_TTL_SECONDS`.
const DEFAULT_CACHE_TTL_SECONDS: u64 = 3600;
/// Time a turn may hold its session beyond the model call's deadline.
const LEASE_MARGIN_MS: u64 = 30_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnBody {
    #[serde(default)]
    session_id: Option<String>,
    message: String,
}

/// `POST /api/help`: one turn; the answer is the reply, the question while clarifying, the
/// dialog state, the trace of nodes and the session's counters. With `Accept:
/// text/event-stream` the answer is the turn's events instead, once the session has granted it
/// (`x-stepwise-session` names the session): `status` notes, then `complete` with the same
/// answer, `error` or `stopped`.
pub async fn post(mut req: Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let accept = req.headers().get("accept")?.unwrap_or_default();
    let streamed = accept.contains("text/event-stream") && !wants_json(&req)?;
    let body: TurnBody = read_json(&mut req).await?;
    // The object's answer goes out as it is: its errors keep their status, code and headers.
    order(env, owner, body.session_id, body.message, streamed).await
}

/// One help-desk turn of `owner` with `message`, in session `session_id` (a new session when
/// `None`): the answer `POST /api/help` gives (also what the MCP tool `help_ask` reads).
pub async fn turn(
    env: &Env,
    owner: &Owner,
    session_id: Option<String>,
    message: &str,
) -> AppResult<Value> {
    let mut answer = order(env, owner, session_id, message.to_owned(), false).await?;
    let text = answer.text().await?;
    if answer.status_code() != 200 {
        return Err(AppError::relayed(answer.status_code(), &text));
    }
    Ok(serde_json::from_str(&text)?)
}

/// Sends the turn to its session's object: its answer (JSON, the event stream, or the error it
/// answered), as it is.
async fn order(
    env: &Env,
    owner: &Owner,
    session_id: Option<String>,
    message: String,
    streamed: bool,
) -> AppResult<Response> {
    check_message(&message)?;
    let create = session_id.is_none();
    let id = match session_id {
        Some(id) if ids::is_id(&id) => id,
        Some(_) => return Err(HelpError::NotFound.into()),
        None => warm::new_id(BINDING)?,
    };
    let order = TurnOrder {
        owner: owner.clone(),
        message,
        create,
        streamed,
    };
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(serde_json::to_string(&order)?.into()));
    let request = Request::new_with_init(&format!("https://{BINDING}.internal/turn"), &init)?;
    request.headers().set(ID_HEADER, &id)?;
    request.headers().set("content-type", "application/json")?;
    objects::fetch(env, BINDING, &id, request).await
}

/// Runs one turn on the session's object: the session grants it, the pipeline runs (unless its
/// owner stops it first), and the outcome is committed. The answer `POST /api/help` gives.
pub async fn run(env: &Env, order: &TurnOrder, id: &str, running: &HelpRun) -> AppResult<Value> {
    let owner = &order.owner;
    let message = order.message.as_str();
    let settings = Settings::from_env(env)?;
    let caller = Caller::Owner(owner.id.clone());
    let lease_id = random_id()?;
    let lease_ms = u64::from(settings.deadline_ms) + LEASE_MARGIN_MS;
    let begin = HelpCommand::Begin {
        lease_id: lease_id.clone(),
        lease_ms,
        create: order.create,
    };
    let begun = client::send(env, id, caller.clone(), begin).await?;
    let turn = begun
        .begun
        .ok_or_else(|| AppError::internal(&"a help session's Begin named no turn"))?;
    running.begun(u64::from(turn));
    let mut cache_key = None;
    // `None`: the owner stopped the turn (dropping the pipeline closes its model call).
    let found = {
        let work = std::pin::pin!(pipeline(
            env,
            &settings,
            owner,
            &begun.session.state,
            message,
            &mut cache_key,
            running,
        ));
        match select(work, running.stop_requested()).await {
            Either::Left((found, _)) => found.map(Some),
            Either::Right(_) => Ok(None),
        }
    };
    let outcome = match found {
        Ok(Some(outcome)) => outcome,
        Ok(None) => return Err(release(env, id, caller, lease_id, stopped_error()).await),
        Err(error) => return Err(release(env, id, caller, lease_id, error).await),
    };
    running.answered();
    // A turn that hands the session to a person counts against the daily handoff caps; past
    // them the turn is refused whole (nothing of it is kept).
    let hands_over = outcome.escalate.is_some() && begun.session.status == SessionStatus::Open;
    if hands_over && let Err(refused) = spend::count_handoff(env, owner).await {
        return Err(release(env, id, caller, lease_id, refused).await);
    }
    let commit = HelpCommand::Commit {
        lease_id: lease_id.clone(),
        turn: Box::new(TurnRecord::new(message, &outcome)),
    };
    let reply = match client::send(env, id, caller.clone(), commit).await {
        Ok(reply) => reply,
        Err(error) => {
            if hands_over {
                spend::uncount_handoff(env, owner).await;
            }
            return Err(release(env, id, caller, lease_id, error).await);
        }
    };
    if hands_over && !reply.escalated {
        spend::uncount_handoff(env, owner).await;
    }
    if let (Some(key), Some((_, answer))) = (cache_key, &outcome.cache) {
        let ttl = number(env, "HELP_CACHE_TTL_SECONDS").unwrap_or(DEFAULT_CACHE_TTL_SECONDS);
        if let Err(error) = Kv::new(env)?.put_json(&key, answer, Some(ttl)).await {
            console_warn!("help: answer not cached: {error:?}");
        }
    }
    let session = &reply.session;
    Ok(json!({
        "session_id": session.id,
        "reply": outcome.reply,
        "footer": outcome.footer,
        "question": outcome.question,
        "dialog_state": outcome.dialog_state,
        "status": session.status,
        "trace": outcome.trace,
        "no_answer": outcome.no_answer,
        "handoff_offered": outcome.offer_handoff,
        "doc": outcome.source,
        "search_calls": session.search_calls,
        "turns": session.turns,
        "interrupt": session.interrupt,
    }))
}

/// Gives a failed turn up (the session stays as it was; a first turn's empty session goes) and
/// answers its error.
async fn release(
    env: &Env,
    id: &str,
    caller: Caller,
    lease_id: String,
    error: AppError,
) -> AppError {
    if let Err(lost) = client::send(env, id, caller, HelpCommand::Release { lease_id }).await {
        console_warn!("help: turn of {id} not released: {lost:?}");
    }
    error
}

/// Runs the pipeline on the session's state, performing each effect (and telling `running`
/// what it is doing).
async fn pipeline(
    env: &Env,
    settings: &Settings,
    owner: &Owner,
    state: &HelpState,
    message: &str,
    cache_key: &mut Option<String>,
    running: &HelpRun,
) -> AppResult<Outcome> {
    let (mut pipeline, mut step) = Pipeline::start(state, message)?;
    loop {
        let input = match step {
            Step::Done(outcome) => return Ok(*outcome),
            Step::Effect(Effect::LookupCache { text }) => {
                let kv = Kv::new(env)?;
                let key = answer_key(&kv, &owner.id, &text).await?;
                let hit: Option<CachedAnswer> = kv.json(&key).await.unwrap_or(None);
                *cache_key = Some(key);
                Input::Cached(hit)
            }
            Step::Effect(Effect::Search { fts, text }) => {
                running.progress("Searching the help articles…");
                let kb = Kb::new(env)?;
                Input::Found(search::best(env, &kb, fts.as_deref(), &text, owner).await?)
            }
            Step::Effect(Effect::Translate(request)) => {
                running.progress("Translating the question…");
                let offline = offline_translation(&request);
                let call = ask(
                    env,
                    settings,
                    owner,
                    &request.system,
                    &request.question,
                    TRANSLATION_MAX_TOKENS,
                    offline,
                );
                // A failed translation asks the question as the article has it.
                Input::Translated(
                    call.await
                        .ok()
                        .map(|t| t.trim().to_owned())
                        .filter(|t| !t.is_empty()),
                )
            }
            Step::Effect(Effect::Generate(request)) => {
                running.progress("Writing the answer…");
                let offline = offline_answer(&request);
                let call = ask(
                    env,
                    settings,
                    owner,
                    &request.system,
                    &request.prompt,
                    GENERATION_MAX_TOKENS,
                    offline,
                );
                let text = call.await?;
                // A blank answer is a failed call: nothing of the turn is kept or cached.
                if text.trim().is_empty() {
                    return Err(AppError::upstream_error("the model gave an empty answer"));
                }
                Input::Generated(text)
            }
        };
        step = pipeline.resume(input);
    }
}

/// The prefix of an owner's cached answers (erased with the owner's data).
pub fn answer_prefix(owner: &str) -> String {
    format!("help-cache:{owner}:")
}

/// The cache key of an owner's question: `help-cache:<owner>:<kb version>:<sha256 of its words>`.
/// Answers are per owner, so a cache hit never tells anyone what another owner asked.
async fn answer_key(kv: &Kv, owner: &str, text: &str) -> AppResult<String> {
    let version = kv.text(KB_VERSION_KEY).await?.unwrap_or_else(|| "0".into());
    let digest = hex(&crypto::sha256(text.as_bytes()).await?);
    Ok(format!("{}{version}:{digest}", answer_prefix(owner)))
}

/// One model call of the chat provider, charged to the spending guard unless offline.
async fn ask(
    env: &Env,
    settings: &Settings,
    owner: &Owner,
    system: &str,
    prompt: &str,
    max_tokens: u32,
    offline: String,
) -> AppResult<String> {
    let provider = settings.providers.chat_provider();
    if provider.kind != ProviderKind::Offline {
        let tokens = estimate_tokens(system.len() + prompt.len(), max_tokens);
        spend::charge(env, owner, Charge { calls: 1, tokens }).await?;
    }
    let messages = [ChatMessage::new(Role::User, prompt.to_owned())];
    let call = ModelCall::text(system, &messages, max_tokens);
    let gateway = Gateway::new(env, settings);
    let offline = move || OfflineAnswer::from(offline.clone());
    match gateway
        .complete(&settings.providers.chat, &call, &offline, gateway.limits())
        .await
    {
        ProviderOutcome::Completed { text } => Ok(text),
        ProviderOutcome::Failed { code, message } => Err(AppError::from(
            stepwise_core::llm::ProviderError::new(code, message),
        )),
    }
}

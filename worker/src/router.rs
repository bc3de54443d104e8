//! The route table: method and path segments to each feature's handler. Routes of owned data
//! resolve the caller's owner here, once (401 without one), and routes that can call a model
//! pass the kill switch and the rate limits here too, so no handler can forget either (but
//! `POST /api/agui`, which admits each run once it has read it: a denial calls no model).

use stepwise_core::conversation::ConversationKind;
use worker::{Env, Method, Request, Response};

use crate::platform::admin::require_admin;
use crate::platform::body;
use crate::platform::error::{AppError, AppResult};
use crate::platform::limits;
use crate::platform::owner::{self, Owner};
use crate::{
    articles, assistant, assistant::host, chat, handshake, health, help, interop, mcp, me,
    research, streams, workflows,
};

/// Answers one request (errors are turned into responses by the caller).
pub async fn route(req: Request, env: Env) -> AppResult<Response> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (req.method(), segments.as_slice()) {
        (Method::Get, ["healthz"]) => health::get(&env),
        (Method::Get, ["api", "workflows", id]) => workflows::get(&env, id).await,
        (Method::Put, ["api", "workflows", id]) => {
            require_admin(&req, &env, "workflow overrides").await?;
            let id = (*id).to_owned();
            workflows::put(req, &env, &id).await
        }
        (Method::Put, ["api", "research", id]) => {
            require_admin(&req, &env, "research imports").await?;
            let id = (*id).to_owned();
            research::import(req, &env, &id).await
        }
        (Method::Get, ["share", id]) => research::share::get(&env, id).await,
        (Method::Get, ["api", "assistant", "registry"]) => assistant::get_registry(),
        (Method::Get, ["api", "prompt-sheets", id]) => handshake::sheets::get(&env, id).await,
        (Method::Put, ["api", "prompt-sheets", id]) => {
            require_admin(&req, &env, "prompt sheet changes").await?;
            let id = (*id).to_owned();
            handshake::sheets::put(req, &env, &id).await
        }
        (Method::Get, ["api", "assistant", "stats", "total"]) => {
            require_admin(&req, &env, "context request totals").await?;
            handshake::stats::get_total(&env).await
        }
        (Method::Get, ["api", "spend"]) => {
            require_admin(&req, &env, "the day's spending").await?;
            Ok(Response::from_json(
                &crate::platform::spend::report(&env).await?,
            )?)
        }
        (Method::Get, ["api", "help", "docs"]) => help::list_docs(&env).await,
        (Method::Get, ["api", "help", "docs", id]) => help::get_doc(&env, id).await,
        (Method::Put, ["api", "help", "docs", id]) => {
            require_admin(&req, &env, "help article imports").await?;
            let id = (*id).to_owned();
            help::put_doc(req, &env, &id).await
        }
        (Method::Post, ["api", "help", "docs:import"]) => {
            require_admin(&req, &env, "help article imports").await?;
            help::import_docs(req, &env).await
        }
        (Method::Get, ["api", "help", "escalations"]) => {
            require_admin(&req, &env, "help escalations").await?;
            help::escalations::list(&req, &env).await
        }
        (Method::Post, ["api", "help", "escalations", id, "resolve"]) => {
            require_admin(&req, &env, "help escalations").await?;
            help::escalations::resolve(&req, &env, id).await
        }
        (
            _,
            ["healthz"]
            | ["api", "workflows", _]
            | ["share", _]
            | ["api", "assistant", "registry"]
            | ["api", "prompt-sheets", _]
            | ["api", "assistant", "stats", "total"]
            | ["api", "spend"]
            | ["api", "help", "docs" | "docs:import" | "escalations"]
            | ["api", "help", "docs", _]
            | ["api", "help", "escalations", _, "resolve"],
        ) => Err(AppError::method_not_allowed()),
        (_, ["api", ..]) => {
            let owner = owner::require(&req, &env).await?;
            owned(req, env, &owner).await
        }
        (Method::Post, ["mcp"]) => {
            let owner = owner::require(&req, &env).await?;
            mcp::serve(req, &env, &owner).await
        }
        (Method::Get, ["mcp"]) if mcp::resumes(&req) => {
            let owner = owner::require(&req, &env).await?;
            mcp::resume(&req, &env, &owner).await
        }
        (Method::Delete, ["mcp"]) => {
            let owner = owner::require(&req, &env).await?;
            mcp::end(&req, &env, &owner).await
        }
        (_, ["mcp"]) => mcp::no_sessions(),
        _ => Err(AppError::not_found("route")),
    }
}

/// The routes of an owner's data. Those that can call a model are admitted first.
async fn owned(req: Request, env: Env, owner: &Owner) -> AppResult<Response> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let route = (req.method(), segments.as_slice());
    if calls_a_model(&route) {
        limits::admit(&req, &env, owner).await?;
    } else if matches!(
        route,
        (Method::Get, ["api", "articles", _])
            | (Method::Get, ["api", "assistant", "artifacts"])
            | (Method::Get, ["api", "me"])
            | (Method::Get, ["api", "me", "export"])
            | (Method::Delete, ["api", "me"])
            | (Method::Post, ["api", "streams"])
            | (Method::Put, ["api", "streams", _])
            | (
                Method::Post,
                ["api", "assistant", "conversations", _, "cards"]
            )
            | (
                Method::Post,
                ["api", "assistant", "conversations", _, "approvals", _]
            )
            | (Method::Post, ["api", "help", "sessions", _, "handoff"])
    ) {
        // Not a model call, but an upstream (PubMed), the day's spending object every model
        // call needs, many reads or deletions at once (an owner's artifacts, their export and
        // erase), a stored
        // write (streams, card outcomes, approvals: an approval's run
        // checks the kill switch itself, so a denial still works when model calls are off) or
        // the operators' list and webhook (handoffs):
        // rate limited so that none can be flooded for free.
        limits::rate_limit(&req, &env, owner).await?;
    }
    match route {
        (Method::Get, ["api", "me"]) => me::get(&env, owner).await,
        (Method::Get, ["api", "me", "export"]) => me::export::get(&req, &env, owner).await,
        (Method::Delete, ["api", "me"]) => {
            body::require_json(&req)?;
            me::erase::delete(req, &env, owner).await
        }
        (Method::Post, ["api", "chat"]) => chat::post_turn(req, env, owner).await,
        (Method::Post, ["api", "agui"]) => interop::post_agui(req, env, owner).await,
        (Method::Put, ["api", "chat", "update-field"]) => chat::update_field(req, env, owner).await,
        (Method::Get, ["api", "conversations", id]) => {
            chat::get_conversation(&req, &env, owner, id).await
        }
        (Method::Post, ["api", "research", "draft"]) => {
            research::create_draft(req, &env, owner).await
        }
        (Method::Post, ["api", "research"]) => research::start(req, &env, owner).await,
        (Method::Get, ["api", "research"]) => research::list(&req, &env, owner).await,
        (Method::Get, ["api", "research", id]) => research::get(&env, owner, id).await,
        (Method::Delete, ["api", "research", id]) => research::delete(&env, owner, id).await,
        (Method::Get, ["api", "research", id, "events"]) => research::events(&env, owner, id).await,
        (Method::Put, ["api", "research", id, "draft"]) => {
            let id = (*id).to_owned();
            research::edit_draft(req, &env, owner, &id).await
        }
        (Method::Post, ["api", "research", id, "confirm"]) => {
            let id = (*id).to_owned();
            research::confirm(req, &env, owner, &id).await
        }
        (Method::Post, ["api", "research", id, "retry"]) => {
            research::retry(&req, &env, owner, id).await
        }
        (Method::Post, ["api", "research", id, "share"]) => {
            research::share(&req, &env, owner, id).await
        }
        (Method::Delete, ["api", "research", id, "share"]) => {
            research::unshare(&env, owner, id).await
        }
        (Method::Post, ["api", "assistant"]) => assistant::post(req, env, owner).await,
        (Method::Post, ["api", "assistant", "actions"]) => {
            assistant::post_action(req, env, owner).await
        }
        (Method::Get, ["api", "assistant", "conversations"]) => {
            assistant::list(&req, &env, owner).await
        }
        (Method::Get, ["api", "assistant", "conversations", id]) => {
            assistant::get(&req, &env, owner, id).await
        }
        (Method::Delete, ["api", "assistant", "conversations", id]) => {
            assistant::delete(&env, owner, id).await
        }
        (Method::Post, ["api", "help"]) => help::turn::post(req, &env, owner).await,
        (Method::Get, ["api", "help", "sessions", id]) => help::get_session(&env, owner, id).await,
        (Method::Delete, ["api", "help", "sessions", id]) => {
            help::delete_session(&env, owner, id).await
        }
        (Method::Post, ["api", "help", "sessions", id, "handoff"]) => {
            help::handoff(&req, &env, owner, id).await
        }
        (Method::Get, ["api", "help", "sessions", id, "stream"]) => {
            help::join(&req, &env, owner, id).await
        }
        (Method::Post, ["api", "help", "sessions", id, "stop"]) => {
            let id = (*id).to_owned();
            help::stop(req, &env, owner, &id).await
        }
        (Method::Get, ["api", "help", "sessions", id, "ws"]) => {
            help::watch(&req, &env, owner, id).await
        }
        (Method::Get, ["api", "streams"]) => streams::list(&req, &env, owner).await,
        (Method::Post, ["api", "streams"]) => streams::create(req, &env, owner).await,
        (Method::Get, ["api", "streams", id]) => streams::get(&env, owner, id).await,
        (Method::Put, ["api", "streams", id]) => {
            let id = (*id).to_owned();
            streams::change(req, &env, owner, &id).await
        }
        (Method::Delete, ["api", "streams", id]) => streams::delete(&env, owner, id).await,
        (Method::Get, ["api", "articles", "search"]) => articles::search(&req, &env, owner).await,
        (Method::Get, ["api", "articles", "abstracts"]) => {
            articles::abstracts(&req, &env, owner).await
        }
        (Method::Get, ["api", "assistant", "artifacts"]) => {
            handshake::artifacts(&req, &env, owner).await
        }
        (Method::Get, ["api", "assistant", "stats"]) => {
            handshake::stats::get(&env, &owner.id).await
        }
        (Method::Post, ["api", "assistant", "context-supply"]) => {
            assistant::deferred::supply(req, env, owner).await
        }
        (
            Method::Post,
            [
                "api",
                "assistant",
                "conversations",
                id,
                "requests",
                request,
                "force",
            ],
        ) => {
            // A POST that calls a model: JSON only, as every other, so a cross-site form
            // cannot reach it.
            body::require_json(&req)?;
            assistant::deferred::force(env.clone(), owner, id, request).await
        }
        (Method::Get, ["api", "assistant", "conversations", id, "stream"]) => {
            host::join(&req, &env, owner, id, ConversationKind::Assistant).await
        }
        (Method::Get, ["api", "conversations", id, "stream"]) => {
            host::join(&req, &env, owner, id, ConversationKind::Guided).await
        }
        (Method::Post, ["api", "assistant", "conversations", id, "cards"]) => {
            body::require_json(&req)?;
            let id = (*id).to_owned();
            assistant::cards::set(req, &env, owner, &id).await
        }
        (
            Method::Post,
            [
                "api",
                "assistant",
                "conversations",
                id,
                "approvals",
                approval,
            ],
        ) => {
            body::require_json(&req)?;
            let (id, approval) = ((*id).to_owned(), (*approval).to_owned());
            assistant::approvals::decide(req, env, owner, &id, &approval).await
        }
        (Method::Post, ["api", "assistant", "conversations", id, "stop"]) => {
            body::require_json(&req)?;
            host::stop(req, &env, owner, id, ConversationKind::Assistant).await
        }
        (Method::Get, ["api", "conversations", id, "ws"]) => {
            handshake::watch(req, &env, owner, id, ConversationKind::Guided).await
        }
        (Method::Post, ["api", "conversations", id, "stop"]) => {
            body::require_json(&req)?;
            host::stop(req, &env, owner, id, ConversationKind::Guided).await
        }
        (Method::Get, ["api", "assistant", "conversations", id, "ws"]) => {
            handshake::watch(req, &env, owner, id, ConversationKind::Assistant).await
        }
        (
            _,
            ["api", "me"]
            | ["api", "me", "export"]
            | ["api", "chat"]
            | ["api", "agui"]
            | ["api", "chat", "update-field"]
            | ["api", "conversations", _]
            | ["api", "conversations", _, "stream" | "stop" | "ws"]
            | ["api", "research", ..]
            | ["api", "assistant" | "streams" | "help"]
            | ["api", "help", "sessions", _]
            | [
                "api",
                "help",
                "sessions",
                _,
                "handoff" | "stream" | "stop" | "ws",
            ]
            | [
                "api",
                "assistant",
                "actions" | "conversations" | "artifacts" | "stats",
            ]
            | ["api", "assistant", "context-supply"]
            | ["api", "assistant", "conversations", _]
            | [
                "api",
                "assistant",
                "conversations",
                _,
                "ws" | "stream" | "stop",
            ]
            | [
                "api",
                "assistant",
                "conversations",
                _,
                "requests",
                _,
                "force",
            ]
            | ["api", "streams", _]
            | ["api", "articles", "search" | "abstracts"],
        ) => Err(AppError::method_not_allowed()),
        _ => Err(AppError::not_found("route")),
    }
}

/// Whether a route can call a model: chat turns, drafts (titled by a model), starts,
/// confirmations and retries. `POST /api/agui` admits its runs itself once it has read them (a
/// denial calls no model).
fn calls_a_model(route: &(Method, &[&str])) -> bool {
    matches!(
        route,
        (Method::Post, ["api", "chat"])
            | (Method::Post, ["api", "assistant"])
            | (Method::Post, ["api", "assistant", "actions"])
            | (Method::Post, ["api", "assistant", "context-supply"])
            | (
                Method::Post,
                [
                    "api",
                    "assistant",
                    "conversations",
                    _,
                    "requests",
                    _,
                    "force"
                ]
            )
            | (Method::Post, ["api", "help"])
            | (Method::Post, ["api", "research", "draft"])
            | (Method::Put, ["api", "research", _, "draft"])
            | (Method::Post, ["api", "research"])
            | (Method::Post, ["api", "research", _, "confirm" | "retry"])
    )
}

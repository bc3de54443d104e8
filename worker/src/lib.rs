//! Stepwise at the edge: a Cloudflare Worker that serves guided chat turns over SSE, proxies the
//! model with server-held keys, persists each turn in Workers KV, and runs multi-LLM research
//! jobs on Durable Objects (one per job) and Queues (`llm-call`, `research-events`).
//!
//! Layers: route (this file) → handler (`chat`, `resources`, `research`) → service (`store`,
//! `provider`, `research_job`) → `stepwise-core`. One [`error::AppError`] maps every failure
//! to a status and a JSON body.

mod body;
mod chat;
mod config;
mod cors;
mod error;
mod event_stream;
mod ids;
mod notify;
mod provider;
mod research;
mod research_calls;
mod research_effects;
mod research_job;
mod research_listeners;
mod resources;
mod store;
mod url_parts;

use worker::{
    Context, Env, MessageBatch, MessageExt, Method, Request, Response, console_error, event,
};

pub use research_job::ResearchJob;

use crate::error::{AppError, AppResult};

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    let origin = req.headers().get("origin")?;
    let allowed = config::var(&env, "ALLOWED_ORIGINS").unwrap_or_default();
    if req.method() == Method::Options {
        return cors::preflight(origin.as_deref(), &allowed);
    }
    let mut response = match route(req, env, &ctx).await {
        Ok(response) => response,
        Err(error) => error.to_response()?,
    };
    cors::decorate(&mut response, origin.as_deref(), &allowed)?;
    Ok(response)
}

async fn route(req: Request, env: Env, ctx: &Context) -> AppResult<Response> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (req.method(), segments.as_slice()) {
        (Method::Get, ["healthz"]) => resources::health(&env),
        (Method::Post, ["api", "chat"]) => chat::post_chat(req, env, ctx).await,
        (Method::Put, ["api", "chat", "update-field"]) => chat::update_field(req, env).await,
        (Method::Get, ["api", "workflows", id]) => resources::get_workflow(&env, id).await,
        (Method::Put, ["api", "workflows", id]) => {
            let id = (*id).to_owned();
            resources::put_workflow(req, &env, &id).await
        }
        (Method::Get, ["api", "conversations", id]) => {
            resources::get_conversation(&req, &env, id).await
        }
        (Method::Post, ["api", "research", "draft"]) => research::create_draft(req, &env).await,
        (Method::Post, ["api", "research"]) => research::start(req, &env).await,
        (Method::Get, ["api", "research"]) => research::list(&req, &env).await,
        (Method::Get, ["api", "research", id]) => research::get(&env, id).await,
        (Method::Put, ["api", "research", id]) => {
            let id = (*id).to_owned();
            research::import(req, &env, &id).await
        }
        (Method::Get, ["api", "research", id, "events"]) => research::events(&env, id).await,
        (Method::Put, ["api", "research", id, "draft"]) => {
            let id = (*id).to_owned();
            research::update_draft(req, &env, &id).await
        }
        (Method::Get, ["share", id]) => research::share(&env, id).await,
        (Method::Post, ["api", "research", id, "confirm"]) => {
            let id = (*id).to_owned();
            research::confirm(req, &env, &id).await
        }
        (Method::Post, ["api", "research", id, "retry"]) => research::retry(&env, id).await,
        (
            _,
            ["healthz"]
            | ["api", "chat"]
            | ["api", "chat", "update-field"]
            | ["api", "workflows", _]
            | ["api", "conversations", _]
            | ["api", "research", ..]
            | ["share", _],
        ) => Err(AppError::new(
            405,
            "method_not_allowed",
            "this method is not allowed here",
        )),
        _ => Err(AppError::not_found("route")),
    }
}

/// The queue consumer. `llm-call`: each message is one provider (or synthesis) call of one job;
/// the calls of a batch run concurrently. `research-events`: lifecycle events, for the webhook.
/// A message that could not be handled is retried by the queue.
#[event(queue)]
async fn queue(batch: MessageBatch<String>, env: Env, _ctx: Context) -> worker::Result<()> {
    let messages = batch.messages()?;
    let from_calls = batch.queue() == "llm-call";
    let handled = futures_util::future::join_all(messages.iter().map(|message| {
        let env = &env;
        async move {
            if from_calls {
                let call: research_calls::CallMessage =
                    serde_json::from_str(message.body()).map_err(|e| e.to_string())?;
                research_calls::handle_call(env, &call)
                    .await
                    .map_err(|e| format!("{:?} {}: {}", call.task, call.provider, e.message))
            } else {
                let event: serde_json::Value =
                    serde_json::from_str(message.body()).map_err(|e| e.to_string())?;
                notify::handle_event(env, &event).await
            }
        }
    }))
    .await;
    for (message, result) in messages.iter().zip(handled) {
        match result {
            Ok(()) => message.ack(),
            Err(error) => {
                console_error!("queue {}: {error}; delivered again later", batch.queue());
                message.retry();
            }
        }
    }
    Ok(())
}

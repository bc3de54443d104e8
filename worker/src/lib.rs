//! Stepwise at the edge: a Cloudflare Worker that serves guided chat turns over SSE, proxies the
//! model with server-held keys, persists each turn in Workers KV, and runs multi-LLM research
//! jobs on Durable Objects (one per job) and Queues (`llm-call`, `research-events`).
//!
//! Layout: one folder a feature (`chat`, `research`, `workflows`, `health`), each with its
//! handlers, services and messages, over `platform` (errors, settings, KV, Durable Object stubs,
//! queues, deadlines, SSE, ids, CORS, bodies) and `provider` (the one way to call a model). The
//! rules are the core's (`stepwise-core`); [`router`] maps requests to handlers.

mod articles;
mod assistant;
mod chat;
mod conversations;
mod handshake;
mod health;
mod help;
mod interop;
mod mcp;
mod me;
mod platform;
mod provider;
mod registry;
mod research;
mod router;
mod streams;
mod workflows;

use worker::{
    Context, Env, MessageBatch, MessageExt, Method, Request, Response, console_error, event,
};

pub use conversations::object::Conversation;
pub use help::object::HelpDesk;
pub use mcp::session::McpSession;
pub use platform::spend_objects::{SpendGuard, SpendShard};
pub use research::job_object::ResearchJob;

use crate::platform::cors;
use crate::platform::error::AppResult;
use crate::platform::settings::var;
use crate::research::messages::{CallMessage, LLM_CALL, RESEARCH_EVENT};

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    let origin = req.headers().get("origin")?;
    let allowed = var(&env, "ALLOWED_ORIGINS").unwrap_or_default();
    if req.method() == Method::Options {
        return cors::preflight(origin.as_deref(), &allowed);
    }
    let beginning = platform::warm::Beginning::enter();
    let response = match router::route(req, env.clone()).await {
        Ok(response) => response,
        Err(error) => error.to_response()?,
    };
    drop(beginning);
    // New conversations' and help sessions' objects, started for the next first turns once this
    // one has its answer.
    if platform::warm::wanted() {
        ctx.wait_until(platform::warm::refill(env));
    }
    cors::decorate(response, origin.as_deref(), &allowed)
}

/// The queue consumer, routing each message by its `kind` (whatever queue it came from):
/// `llm_call`, one provider (or synthesis) call of one job, the calls of a batch running
/// concurrently; `research_event`, a lifecycle event, for the webhook. A message that could not
/// be handled is retried by the queue (after `retry_delay`), and past `max_retries` moved to the
/// dead-letter queue.
#[event(queue)]
async fn queue(batch: MessageBatch<String>, env: Env, _ctx: Context) -> worker::Result<()> {
    let messages = batch.messages()?;
    let handled = futures::future::join_all(messages.iter().map(|message| {
        let env = &env;
        async move { consume(env, message.body()).await }
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

async fn consume(env: &Env, body: &str) -> AppResult<()> {
    let message: serde_json::Value = serde_json::from_str(body)?;
    match message["kind"].as_str().unwrap_or("") {
        LLM_CALL => {
            let call: CallMessage = serde_json::from_value(message)?;
            research::calls::handle(env, &call).await
        }
        RESEARCH_EVENT => research::notify::handle(env, &message).await,
        help::escalations::HELP_EVENT => help::escalations::deliver(env, &message).await,
        conversations::object::CONTEXT_FALLBACK => {
            assistant::deferred::fallback(env, &message).await
        }
        other => {
            // An unknown kind can never succeed: drop it rather than retry it.
            console_error!("queue: message of unknown kind `{other}` dropped");
            Ok(())
        }
    }
}

//! Stepwise at the edge: a Cloudflare Worker that serves guided chat turns over SSE, proxies the
//! model with server-held keys, and persists each turn in Workers KV.
//!
//! Layers: route (this file) → handler (`chat`, `resources`) → service (`store`, `provider`) →
//! `stepwise-core`. One [`error::AppError`] maps every failure to a status and a JSON body.

mod body;
mod chat;
mod config;
mod cors;
mod error;
mod ids;
mod provider;
mod resources;
mod store;

use worker::{Context, Env, Method, Request, Response, event};

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
        (
            _,
            ["healthz"]
            | ["api", "chat"]
            | ["api", "chat", "update-field"]
            | ["api", "workflows", _]
            | ["api", "conversations", _],
        ) => Err(AppError::new(
            405,
            "method_not_allowed",
            "this method is not allowed here",
        )),
        _ => Err(AppError::not_found("route")),
    }
}

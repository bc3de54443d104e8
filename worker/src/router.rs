//! The route table: method and path segments to each feature's handler.

use worker::{Context, Env, Method, Request, Response};

use crate::platform::error::{AppError, AppResult};
use crate::{chat, health, research, workflows};

/// Answers one request (errors are turned into responses by the caller).
pub async fn route(req: Request, env: Env, ctx: &Context) -> AppResult<Response> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (req.method(), segments.as_slice()) {
        (Method::Get, ["healthz"]) => health::get(&env),
        (Method::Post, ["api", "chat"]) => chat::post_turn(req, env, ctx).await,
        (Method::Put, ["api", "chat", "update-field"]) => chat::update_field(req, env).await,
        (Method::Get, ["api", "conversations", id]) => chat::get_conversation(&req, &env, id).await,
        (Method::Get, ["api", "workflows", id]) => workflows::get(&env, id).await,
        (Method::Put, ["api", "workflows", id]) => {
            let id = (*id).to_owned();
            workflows::put(req, &env, &id).await
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
            research::edit_draft(req, &env, &id).await
        }
        (Method::Post, ["api", "research", id, "confirm"]) => {
            let id = (*id).to_owned();
            research::confirm(req, &env, &id).await
        }
        (Method::Post, ["api", "research", id, "retry"]) => research::retry(&env, id).await,
        (Method::Get, ["share", id]) => research::share::get(&env, id).await,
        (
            _,
            ["healthz"]
            | ["api", "chat"]
            | ["api", "chat", "update-field"]
            | ["api", "workflows", _]
            | ["api", "conversations", _]
            | ["api", "research", ..]
            | ["share", _],
        ) => Err(AppError::method_not_allowed()),
        _ => Err(AppError::not_found("route")),
    }
}

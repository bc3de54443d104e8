//! Read and admin endpoints: health, workflow specs (GET, admin PUT), conversation snapshots.

use stepwise_core::workflow::WorkflowSpec;
use worker::{Env, Request, Response};

use crate::body::read_json;
use crate::chat::TOKEN_HEADER;
use crate::config::Config;
use crate::error::{AppError, AppResult};
use crate::ids;
use crate::store::Store;

/// `GET /healthz`: liveness and the chat's provider (name and kind, never its key).
pub fn health(env: &Env) -> AppResult<Response> {
    let config = Config::from_env(env)?;
    let provider = config.providers.chat_provider();
    // Names and kinds only: never base URLs or key names.
    let providers: Vec<_> = config
        .providers
        .providers
        .iter()
        .map(|p| serde_json::json!({"name": p.name, "kind": p.kind}))
        .collect();
    let body = serde_json::json!({
        "status": "ok",
        "provider": {"name": provider.name, "kind": provider.kind},
        "providers": providers,
    });
    Ok(Response::from_json(&body)?)
}

/// `GET /api/workflows/:id`: the KV override, else the built-in spec.
pub async fn get_workflow(env: &Env, id: &str) -> AppResult<Response> {
    let spec = Store::new(env)?.workflow(id).await?;
    Ok(Response::from_json(&spec)?)
}

/// `PUT /api/workflows/:id`: stores a validated override; needs `Authorization: Bearer <ADMIN_TOKEN>`.
pub async fn put_workflow(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    require_admin(&req, env, "workflow overrides")?;
    let value: serde_json::Value = read_json(&mut req).await?;
    let spec =
        WorkflowSpec::from_value(value).map_err(|e| AppError::new(422, e.code(), e.to_string()))?;
    if spec.id != id {
        return Err(AppError::new(
            422,
            "invalid_spec",
            format!("the spec's id `{}` is not `{id}`", spec.id),
        ));
    }
    Store::new(env)?.put_workflow(&spec).await?;
    Ok(Response::from_json(&spec)?)
}

/// `GET /api/conversations/:id`: the last snapshot, for refresh recovery; needs the token.
pub async fn get_conversation(req: &Request, env: &Env, id: &str) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("conversation"));
    }
    let snapshot = Store::new(env)?
        .conversation(id)
        .await?
        .ok_or_else(|| AppError::not_found("conversation"))?;
    let token = req.headers().get(TOKEN_HEADER)?.unwrap_or_default();
    if !ids::same_secret(&token, &snapshot.token) {
        return Err(AppError::new(
            403,
            "forbidden",
            "this conversation needs its token in the X-Conversation-Token header",
        ));
    }
    let body = serde_json::json!({
        "conversation_id": id,
        "workflow": snapshot.workflow,
        "current_step": snapshot.current_step,
        "current_config": snapshot.current_config,
        "conversation_history": snapshot.conversation_history,
        "skipped": snapshot.skipped,
        "turns": snapshot.turns,
    });
    Ok(Response::from_json(&body)?)
}

/// Checks `Authorization: Bearer <ADMIN_TOKEN>` (403 `forbidden` when no token is set or it differs).
pub fn require_admin(req: &Request, env: &Env, what: &str) -> AppResult<()> {
    let admin = env
        .secret("ADMIN_TOKEN")
        .ok()
        .map(|s| s.to_string())
        .filter(|s| !s.is_empty());
    let Some(admin) = admin else {
        return Err(AppError::new(
            403,
            "forbidden",
            format!("{what} are disabled: no ADMIN_TOKEN is set"),
        ));
    };
    let given = req.headers().get("authorization")?.unwrap_or_default();
    let token = given.strip_prefix("Bearer ").unwrap_or_default();
    if !ids::same_secret(token, &admin) {
        return Err(AppError::new(
            403,
            "forbidden",
            "a valid admin token is required",
        ));
    }
    Ok(())
}

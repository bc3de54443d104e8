//! `GET /healthz`: liveness and the configured providers (names and kinds, never URLs or keys).

use worker::{Env, Response};

use crate::platform::error::AppResult;
use crate::platform::settings::Settings;

/// `GET /healthz`: `{status, provider: {name, kind}, providers: [{name, kind}]}`.
pub fn get(env: &Env) -> AppResult<Response> {
    let settings = Settings::from_env(env)?;
    let chat = settings.providers.chat_provider();
    // Names and kinds only: never base URLs or key names.
    let providers: Vec<_> = settings
        .providers
        .providers
        .iter()
        .map(|p| serde_json::json!({"name": p.name, "kind": p.kind}))
        .collect();
    let health = serde_json::json!({
        "status": "ok",
        "provider": {"name": chat.name, "kind": chat.kind},
        "providers": providers,
    });
    Ok(Response::from_json(&health)?)
}

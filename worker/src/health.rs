//! `GET /healthz`: liveness and the configured providers (names and kinds, never URLs or keys).

use stepwise_core::answers::{Health, ProviderInfo};
use worker::{Env, Response};

use crate::platform::error::AppResult;
use crate::platform::settings::Settings;

/// `GET /healthz`: `{status, provider: {name, kind}, providers: [{name, kind}]}`.
pub fn get(env: &Env) -> AppResult<Response> {
    let settings = Settings::from_env(env)?;
    let info = |p: &stepwise_core::llm::ProviderConfig| ProviderInfo {
        name: p.name.clone(),
        kind: p.kind,
    };
    // Names and kinds only: never base URLs or key names.
    let health = Health {
        status: "ok".to_owned(),
        provider: info(settings.providers.chat_provider()),
        providers: settings.providers.providers.iter().map(info).collect(),
    };
    Ok(Response::from_json(&health)?)
}

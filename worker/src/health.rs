//! `GET /healthz`: liveness and the configured providers (names and kinds, never URLs or keys).

use serde::Serialize;
use stepwise_core::llm::{ProviderConfig, ProviderKind};
use worker::{Env, Response};

use crate::platform::error::AppResult;
use crate::platform::settings::Settings;

/// A provider as health reports it.
#[derive(Serialize)]
struct ProviderName<'a> {
    name: &'a str,
    kind: ProviderKind,
}

/// The health answer.
#[derive(Serialize)]
struct Health<'a> {
    status: &'static str,
    provider: ProviderName<'a>,
    providers: Vec<ProviderName<'a>>,
}

/// `GET /healthz`.
pub fn get(env: &Env) -> AppResult<Response> {
    let settings = Settings::from_env(env)?;
    let chat = settings.providers.chat_provider();
    let health = Health {
        status: "ok",
        provider: name(chat),
        providers: settings.providers.providers.iter().map(name).collect(),
    };
    Ok(Response::from_json(&health)?)
}

fn name(provider: &ProviderConfig) -> ProviderName<'_> {
    ProviderName {
        name: &provider.name,
        kind: provider.kind,
    }
}

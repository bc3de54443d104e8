//! The Worker's settings, read from its variables and secrets (wrangler.toml `[vars]`,
//! `.dev.vars`, `wrangler secret put`).

use stepwise_core::llm::{ProviderConfig, ProviderSettings};
use stepwise_core::turn::DEFAULT_HISTORY_BUDGET;
use worker::Env;

use super::error::AppResult;

/// Default time allowed for a provider to start and to keep answering, in ms.
pub const DEFAULT_TIMEOUT_MS: u32 = 60_000;
/// Default time allowed for a whole model call, from the request to the last byte, in ms.
pub const DEFAULT_DEADLINE_MS: u32 = 240_000;
/// Default most tokens a reply may have.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// The Worker's settings for one request.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The providers and the chat's choice.
    pub providers: ProviderSettings,
    /// Characters of history sent upstream (`HISTORY_BUDGET_CHARS`).
    pub history_budget: usize,
    /// Provider timeout in ms (`LLM_TIMEOUT_MS`): for the answer to start, and between chunks.
    pub timeout_ms: u32,
    /// Whole-call deadline in ms (`LLM_DEADLINE_MS`): a call still answering after it fails.
    pub deadline_ms: u32,
    /// Most tokens per reply (`LLM_MAX_TOKENS`).
    pub max_tokens: u32,
}

impl Settings {
    /// Reads the settings; a bad setting is a 500 `misconfigured` with the reason (never a value).
    pub fn from_env(env: &Env) -> AppResult<Settings> {
        let providers = ProviderSettings::resolve(
            var(env, "LLM_PROVIDERS").as_deref(),
            var(env, "LLM_PROVIDER").as_deref(),
            var(env, "LLM_BASE_URL").as_deref(),
            var(env, "LLM_MODEL").as_deref(),
        )?;
        Ok(Settings {
            providers,
            history_budget: number(env, "HISTORY_BUDGET_CHARS").unwrap_or(DEFAULT_HISTORY_BUDGET),
            timeout_ms: number(env, "LLM_TIMEOUT_MS").unwrap_or(DEFAULT_TIMEOUT_MS),
            deadline_ms: number(env, "LLM_DEADLINE_MS").unwrap_or(DEFAULT_DEADLINE_MS),
            max_tokens: number(env, "LLM_MAX_TOKENS").unwrap_or(DEFAULT_MAX_TOKENS),
        })
    }
}

/// A provider's key, from the secret its settings name.
pub fn api_key(env: &Env, provider: &ProviderConfig) -> Option<String> {
    let name = provider.api_key_secret.as_deref()?;
    env.secret(name)
        .ok()
        .map(|s| s.to_string())
        .filter(|s| !s.is_empty())
}

/// A variable's value, when set and not blank.
pub fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name)
        .ok()
        .map(|v| v.to_string())
        .filter(|v| !v.trim().is_empty())
}

/// A numeric variable, when set and valid.
pub fn number<T: std::str::FromStr>(env: &Env, name: &str) -> Option<T> {
    var(env, name).and_then(|v| v.trim().parse().ok())
}

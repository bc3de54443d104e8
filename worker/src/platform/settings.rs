//! The Worker's settings, read from its variables and secrets (wrangler.toml `vars`,
//! `.dev.vars`, `wrangler secret put`).

use std::cell::RefCell;

use stepwise_core::llm::{ProviderConfig, ProviderSettings};
use stepwise_core::research::Lifetimes;
use stepwise_core::turn::{DEFAULT_HISTORY_BUDGET, DEFAULT_MAX_MESSAGE_CHARS, TurnOptions};
use worker::Env;

use super::error::AppResult;

/// Default time allowed for a provider to start and to keep answering, in ms.
pub const DEFAULT_TIMEOUT_MS: u32 = 60_000;
/// Default time allowed for a whole model call, from the request to the last byte, in ms.
pub const DEFAULT_DEADLINE_MS: u32 = 240_000;
/// Default most tokens a reply may have.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
/// Default most bytes of one answer read from a provider (past it: `answer_too_long`).
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 * 1024;
/// Default days a share page is served.
pub const DEFAULT_SHARE_TTL_DAYS: u64 = 90;
const DAY_MS: u64 = 24 * 3600 * 1000;

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
    /// Most bytes of one answer (`LLM_MAX_ANSWER_BYTES`).
    pub max_answer_bytes: usize,
    /// Longest user message, in characters (`MAX_MESSAGE_CHARS`).
    pub max_message_chars: usize,
}

thread_local! {
    /// The settings once read: an isolate's variables do not change while it lives.
    static READ: RefCell<Option<Settings>> = const { RefCell::new(None) };
}

impl Settings {
    /// The settings, read once per isolate; a bad setting is a 500 `misconfigured` with the
    /// reason (never a value), on every request until it is fixed.
    pub fn from_env(env: &Env) -> AppResult<Settings> {
        if let Some(settings) = READ.with(|read| read.borrow().clone()) {
            return Ok(settings);
        }
        let settings = Settings::read(env)?;
        READ.with(|read| *read.borrow_mut() = Some(settings.clone()));
        Ok(settings)
    }

    fn read(env: &Env) -> AppResult<Settings> {
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
            max_answer_bytes: number(env, "LLM_MAX_ANSWER_BYTES")
                .unwrap_or(DEFAULT_MAX_ANSWER_BYTES),
            max_message_chars: number(env, "MAX_MESSAGE_CHARS")
                .unwrap_or(DEFAULT_MAX_MESSAGE_CHARS),
        })
    }

    /// The options of a chat turn.
    pub fn turn_options(&self) -> TurnOptions {
        TurnOptions {
            history_budget: self.history_budget,
            max_message_chars: self.max_message_chars,
        }
    }
}

/// How long research calls, drafts and finished jobs live (`RESEARCH_TIMEOUT_MS`,
/// `DRAFT_TTL_MS`, `RESEARCH_RETENTION_DAYS`).
pub fn lifetimes(env: &Env) -> Lifetimes {
    let defaults = Lifetimes::default();
    Lifetimes {
        call_timeout_ms: number(env, "RESEARCH_TIMEOUT_MS").unwrap_or(defaults.call_timeout_ms),
        draft_ttl_ms: number(env, "DRAFT_TTL_MS").unwrap_or(defaults.draft_ttl_ms),
        retention_ms: number::<u64>(env, "RESEARCH_RETENTION_DAYS")
            .map_or(defaults.retention_ms, |days| days.saturating_mul(DAY_MS)),
    }
}

/// How long a share page is served, in ms (`SHARE_TTL_DAYS`, default 90 days; `SHARE_TTL_MS`
/// overrides it, for tests).
pub fn share_ttl_ms(env: &Env) -> u64 {
    number(env, "SHARE_TTL_MS").unwrap_or_else(|| {
        number::<u64>(env, "SHARE_TTL_DAYS")
            .unwrap_or(DEFAULT_SHARE_TTL_DAYS)
            .saturating_mul(DAY_MS)
    })
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

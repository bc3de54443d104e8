//! The one way to call a model: [`Gateway`] picks the configured provider, answers offline
//! in-process or opens the upstream stream, and either hands the stream over (a chat turn
//! forwards it as it arrives) or drains it into a [`ProviderOutcome`] (research calls, titles).

mod stream;

use stepwise_core::llm::{ErrorCode, ModelCall, ProviderConfig, ProviderError, ProviderKind};
use stepwise_core::offline::OfflineAnswer;
use stepwise_core::research::ProviderOutcome;
use worker::{Env, console_warn};

pub use stream::{CallLimits, ModelStream};

use crate::platform::limits::calls_disabled;
use crate::platform::settings::{Settings, api_key};

/// Calls the configured providers with the Worker's keys.
pub struct Gateway<'a> {
    env: &'a Env,
    settings: &'a Settings,
}

impl<'a> Gateway<'a> {
    /// The gateway of this environment and its settings.
    pub fn new(env: &'a Env, settings: &'a Settings) -> Self {
        Gateway { env, settings }
    }

    /// The limits of a call from the settings: `LLM_TIMEOUT_MS` per chunk, `LLM_DEADLINE_MS`
    /// for the whole call, `LLM_MAX_ANSWER_BYTES` for the answer.
    pub fn limits(&self) -> CallLimits {
        CallLimits {
            chunk_timeout_ms: self.settings.timeout_ms,
            deadline_ms: self.settings.deadline_ms,
            max_answer_bytes: self.settings.max_answer_bytes,
        }
    }

    /// The failure as a client may see it: its code and the code's generic message. The
    /// provider's own message (already free of the key) is logged here and goes no further.
    pub fn public(provider: &str, error: ProviderError) -> ProviderError {
        let code = error.code.as_str();
        console_warn!("provider {provider}: {code}: {}", error.message);
        error.public()
    }

    /// Opens a call to `provider`. `offline` writes the offline provider's answer (text, and tool
    /// calls for a call that offers tools); it runs only for that kind.
    pub async fn open(
        &self,
        provider: &ProviderConfig,
        call: &ModelCall<'_>,
        offline: &dyn Fn() -> OfflineAnswer,
        limits: CallLimits,
    ) -> Result<ModelStream, ProviderError> {
        if provider.kind == ProviderKind::Offline {
            return Ok(ModelStream::offline(offline()));
        }
        // Routes refuse model calls at the door when the kill switch is on (`limits::admit`);
        // this holds for what was queued before (research calls, context fallbacks) too.
        if calls_disabled(self.env) {
            return Err(ProviderError::new(
                ErrorCode::ModelCallsDisabled,
                ErrorCode::ModelCallsDisabled.public_message(),
            ));
        }
        let key = api_key(self.env, provider);
        ModelStream::open(provider, key, call, limits).await
    }

    /// Asks the provider named `name` and collects its whole answer. Every failure, an unknown
    /// provider included, is a [`ProviderOutcome::Failed`] with a normalized code.
    pub async fn complete(
        &self,
        name: &str,
        call: &ModelCall<'_>,
        offline: &dyn Fn() -> OfflineAnswer,
        limits: CallLimits,
    ) -> ProviderOutcome {
        let Some(provider) = self.settings.providers.get(name) else {
            let message = format!("provider `{name}` is not configured");
            return ProviderOutcome::failed(ErrorCode::UpstreamError, message);
        };
        let drained = async {
            let mut stream = self.open(provider, call, offline, limits).await?;
            let mut text = String::new();
            while let Some(piece) = stream.next_text().await? {
                text.push_str(&piece);
            }
            Ok::<_, ProviderError>(text)
        };
        match drained.await {
            Ok(text) => ProviderOutcome::Completed { text },
            Err(error) => Gateway::public(name, error).into(),
        }
    }
}

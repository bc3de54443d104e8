//! Provider settings: the named provider list (`LLM_PROVIDERS`) or the single-provider
//! shorthand (`LLM_PROVIDER` + `LLM_BASE_URL` + `LLM_MODEL` + secret `LLM_API_KEY`), validated.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI chat completions, or any compatible server (Ollama, vLLM, llama.cpp...).
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `streamGenerateContent`.
    Gemini,
    /// The built-in rule-based provider (no network; not an LLM).
    Offline,
}

/// One configured provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Unique name (`[a-z0-9_-]`, 1-64), used in settings and research jobs.
    pub name: String,
    /// The protocol.
    pub kind: ProviderKind,
    /// Base URL, e.g. `http://127.0.0.1:11434/v1` for Ollama; the provider's own by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Model name sent upstream.
    #[serde(default)]
    pub model: String,
    /// Name of the secret that holds this provider's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_secret: Option<String>,
}

/// Why provider settings were refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// `LLM_PROVIDERS` is not a JSON array of provider objects.
    #[error("LLM_PROVIDERS is not a JSON array of providers: {0}")]
    Json(String),
    /// A provider is invalid.
    #[error("provider `{name}`: {reason}")]
    Invalid {
        /// The provider's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// `LLM_PROVIDER` names no configured provider (or is not a known kind for the shorthand).
    #[error("LLM_PROVIDER `{0}` is not a configured provider")]
    UnknownProvider(String),
}

impl SettingsError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        "invalid_provider_settings"
    }
}

/// The validated providers and the one the chat uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderSettings {
    /// Every configured provider.
    pub providers: Vec<ProviderConfig>,
    /// The name of the provider the chat uses.
    pub chat: String,
}

impl ProviderSettings {
    /// Resolves settings from the Worker's variables (each `None` when unset). With nothing set,
    /// the single provider is `offline`.
    ///
    /// ```
    /// use stepwise_core::llm::{ProviderKind, ProviderSettings};
    /// let s = ProviderSettings::resolve(None, Some("openai"), Some("http://127.0.0.1:11434/v1"), Some("llama3")).unwrap();
    /// assert_eq!(s.chat_provider().kind, ProviderKind::OpenAi);
    /// assert_eq!(s.chat_provider().api_key_secret.as_deref(), Some("LLM_API_KEY"));
    /// ```
    pub fn resolve(
        providers_json: Option<&str>,
        provider: Option<&str>,
        base_url: Option<&str>,
        model: Option<&str>,
    ) -> Result<Self, SettingsError> {
        let settings = match (blank(providers_json), blank(provider)) {
            (Some(json), chosen) => {
                let providers: Vec<ProviderConfig> =
                    serde_json::from_str(json).map_err(|e| SettingsError::Json(e.to_string()))?;
                let chat = match chosen {
                    Some(name) => name.to_owned(),
                    None => providers
                        .first()
                        .map(|p| p.name.clone())
                        .unwrap_or_default(),
                };
                ProviderSettings { providers, chat }
            }
            (None, Some(kind)) => {
                let kind: ProviderKind =
                    serde_json::from_value(serde_json::Value::String(kind.to_owned()))
                        .map_err(|_| SettingsError::UnknownProvider(kind.to_owned()))?;
                let name = serde_json::to_value(kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let provider = ProviderConfig {
                    name: name.clone(),
                    kind,
                    base_url: blank(base_url).map(str::to_owned),
                    model: blank(model).unwrap_or_default().to_owned(),
                    api_key_secret: (kind != ProviderKind::Offline)
                        .then(|| "LLM_API_KEY".to_owned()),
                };
                ProviderSettings {
                    providers: vec![provider],
                    chat: name,
                }
            }
            // Nothing configured: the offline provider, under three names so that research
            // jobs show their fan-out with no keys.
            (None, None) => ProviderSettings {
                providers: OFFLINE_NAMES.iter().map(|name| offline(name)).collect(),
                chat: OFFLINE_NAMES[0].into(),
            },
        };
        settings.validate()?;
        Ok(settings)
    }

    /// The provider the chat uses.
    pub fn chat_provider(&self) -> &ProviderConfig {
        self.get(&self.chat)
            .expect("validated: the chat provider exists")
    }

    /// The provider a chat request names, or the chat provider when it names none; `None` for a
    /// name that is not configured.
    pub fn for_chat(&self, named: Option<&str>) -> Option<&ProviderConfig> {
        match named {
            Some(name) => self.get(name),
            None => Some(self.chat_provider()),
        }
    }

    /// The configured providers' names, in configuration order.
    pub fn names(&self) -> Vec<String> {
        self.providers.iter().map(|p| p.name.clone()).collect()
    }

    /// A provider by name.
    pub fn get(&self, name: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|p| p.name == name)
    }

    fn validate(&self) -> Result<(), SettingsError> {
        if self.providers.is_empty() {
            return Err(SettingsError::Json("the list is empty".into()));
        }
        for (index, provider) in self.providers.iter().enumerate() {
            let invalid = |reason: &str| SettingsError::Invalid {
                name: provider.name.clone(),
                reason: reason.to_owned(),
            };
            let name_ok = !provider.name.is_empty()
                && provider.name.len() <= 64
                && provider.name.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                });
            if !name_ok {
                return Err(invalid(
                    "the name must be 1-64 characters of a-z, 0-9, _ and -",
                ));
            }
            if self.providers[..index]
                .iter()
                .any(|p| p.name == provider.name)
            {
                return Err(invalid("the name is used twice"));
            }
            if provider.kind != ProviderKind::Offline && provider.model.trim().is_empty() {
                return Err(invalid("a model is required"));
            }
            if let Some(url) = &provider.base_url {
                let scheme_ok = url.starts_with("https://") || url.starts_with("http://");
                if !scheme_ok || url.contains(char::is_whitespace) {
                    return Err(invalid("base_url must be an http or https URL"));
                }
            }
        }
        if self.get(&self.chat).is_none() {
            return Err(SettingsError::UnknownProvider(self.chat.clone()));
        }
        Ok(())
    }
}

/// A set, non-blank variable.
fn blank(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// The names of the offline providers configured when nothing is set.
pub const OFFLINE_NAMES: [&str; 3] = ["offline", "offline-analyst", "offline-critic"];

fn offline(name: &str) -> ProviderConfig {
    ProviderConfig {
        name: name.into(),
        kind: ProviderKind::Offline,
        base_url: None,
        model: String::new(),
        api_key_secret: None,
    }
}

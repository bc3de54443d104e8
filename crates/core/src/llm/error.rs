//! Normalized provider errors: every upstream failure maps to one of a few stable codes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The stable code of an upstream failure. Read by hand ([`ErrorCode::parse`]): the derived
/// reader of a unit enum costs the Worker more than a match on the string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", schemars(rename = "ProviderErrorCode"))]
pub enum ErrorCode {
    /// The provider did not answer (or finish) in time.
    Timeout,
    /// The provider refused for rate or quota limits.
    RateLimited,
    /// The provider refused the credentials.
    Auth,
    /// The provider failed or is overloaded.
    UpstreamError,
    /// The stream was malformed or ended before completion.
    BadStream,
    /// The answer passed the size the server reads.
    AnswerTooLong,
    /// The server's kill switch (`MODEL_CALLS_DISABLED`) is on: no provider was called. Work
    /// queued before it was turned on (research calls, context fallbacks) ends with this.
    ModelCallsDisabled,
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        ErrorCode::parse(&code)
            .ok_or_else(|| serde::de::Error::custom("an unknown provider error code"))
    }
}

impl ErrorCode {
    /// The code for its wire name.
    ///
    /// ```
    /// use stepwise_core::llm::ErrorCode;
    /// assert_eq!(ErrorCode::parse("rate_limited"), Some(ErrorCode::RateLimited));
    /// assert_eq!(ErrorCode::parse("teapot"), None);
    /// ```
    pub fn parse(code: &str) -> Option<ErrorCode> {
        Some(match code {
            "timeout" => ErrorCode::Timeout,
            "rate_limited" => ErrorCode::RateLimited,
            "auth" => ErrorCode::Auth,
            "upstream_error" => ErrorCode::UpstreamError,
            "bad_stream" => ErrorCode::BadStream,
            "answer_too_long" => ErrorCode::AnswerTooLong,
            "model_calls_disabled" => ErrorCode::ModelCallsDisabled,
            _ => return None,
        })
    }

    /// The code as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Timeout => "timeout",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Auth => "auth",
            ErrorCode::UpstreamError => "upstream_error",
            ErrorCode::BadStream => "bad_stream",
            ErrorCode::AnswerTooLong => "answer_too_long",
            ErrorCode::ModelCallsDisabled => "model_calls_disabled",
        }
    }

    /// What a client is told about a failure with this code: a generic sentence. The provider's
    /// own message can name the operator's organization or quota state, so it stays in the
    /// server's logs.
    pub fn public_message(self) -> &'static str {
        match self {
            ErrorCode::Timeout => "the model provider did not answer in time",
            ErrorCode::RateLimited => "the model provider is limiting requests; try again later",
            ErrorCode::Auth => "the model provider refused the server's credentials",
            ErrorCode::UpstreamError => "the model provider failed to answer",
            ErrorCode::BadStream => "the model provider's answer was cut off or malformed",
            ErrorCode::AnswerTooLong => "the model's answer was longer than this server accepts",
            ErrorCode::ModelCallsDisabled => "model calls are turned off on this server for now",
        }
    }
}

/// An upstream failure: a code and a message safe to show (it never contains request headers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProviderError {
    /// The normalized code.
    pub code: ErrorCode,
    /// What went wrong, from the provider's error body where it had one.
    pub message: String,
}

/// Longest provider message kept, in characters.
const MAX_MESSAGE_CHARS: usize = 300;

impl ProviderError {
    /// A new error. The message is kept whole: scrub secrets with [`ProviderError::for_client`]
    /// before it leaves the server (cutting first could leave part of a secret behind).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ProviderError {
            code,
            message: message.into(),
        }
    }

    /// The error as it may be shown: every occurrence of `secret` replaced, then the message
    /// cut to 300 characters.
    ///
    /// ```
    /// use stepwise_core::llm::{ErrorCode, ProviderError};
    /// let e = ProviderError::new(ErrorCode::Auth, format!("{}sk-secret-key", "y".repeat(295)));
    /// assert!(!e.for_client(Some("sk-secret-key")).message.contains("sk-"));
    /// ```
    pub fn for_client(mut self, secret: Option<&str>) -> Self {
        if let Some(secret) = secret.filter(|s| !s.is_empty()) {
            self.message = self.message.replace(secret, "[redacted]");
        }
        if self.message.chars().count() > MAX_MESSAGE_CHARS {
            self.message = self
                .message
                .chars()
                .take(MAX_MESSAGE_CHARS)
                .collect::<String>()
                + "…";
        }
        self
    }

    /// The error as clients see it: the code, and the code's generic message
    /// ([`ErrorCode::public_message`]).
    ///
    /// ```
    /// use stepwise_core::llm::{ErrorCode, ProviderError};
    /// let e = ProviderError::new(ErrorCode::RateLimited, "org-42 is over its monthly quota");
    /// assert!(!e.public().message.contains("org-42"));
    /// ```
    pub fn public(&self) -> ProviderError {
        ProviderError::new(self.code, self.code.public_message())
    }

    /// The error for a non-success HTTP status and its body (any provider's error JSON, or text).
    ///
    /// ```
    /// use stepwise_core::llm::{ErrorCode, ProviderError};
    /// let e = ProviderError::from_status(429, r#"{"error":{"message":"Slow down","type":"rate_limit_error"}}"#);
    /// assert_eq!((e.code, e.message.as_str()), (ErrorCode::RateLimited, "Slow down"));
    /// ```
    pub fn from_status(status: u16, body: &str) -> Self {
        let json: Option<Value> = serde_json::from_str(body).ok();
        let error = json.as_ref().map(|v| v.get("error").unwrap_or(v));
        let message = error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("the provider answered HTTP {status}"));
        let code = match status {
            401 | 403 => ErrorCode::Auth,
            429 => ErrorCode::RateLimited,
            408 | 504 => ErrorCode::Timeout,
            // Gemini answers an invalid key with 400 INVALID_ARGUMENT.
            400 if message.contains("API key") => ErrorCode::Auth,
            _ => ErrorCode::UpstreamError,
        };
        ProviderError::new(code, message)
    }

    /// The error for an error object that arrived inside a stream (`{"error": {...}}` or an
    /// Anthropic `error` event).
    pub(crate) fn from_stream_error(error: &Value) -> Self {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the provider reported an error");
        let kind = error
            .get("type")
            .or_else(|| error.get("status"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let status = error.get("code").and_then(Value::as_u64).unwrap_or(0);
        let code = match (kind, status) {
            ("rate_limit_error" | "RESOURCE_EXHAUSTED", _) | (_, 429) => ErrorCode::RateLimited,
            (
                "authentication_error"
                | "permission_error"
                | "PERMISSION_DENIED"
                | "UNAUTHENTICATED",
                _,
            )
            | (_, 401 | 403) => ErrorCode::Auth,
            ("DEADLINE_EXCEEDED", _) | (_, 408 | 504) => ErrorCode::Timeout,
            _ => ErrorCode::UpstreamError,
        };
        ProviderError::new(code, message)
    }
}

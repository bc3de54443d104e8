//! The Worker's one error type: a status, a stable machine code and a message safe to show,
//! answered as `{"error": {"code", "message"}}`. Every typed error of the core converts into it
//! here, so this file is the one table from error kinds to HTTP statuses. Internal details are
//! logged, never echoed to the client.

use stepwise_core::approval::ApprovalError;
use stepwise_core::conversation::ConversationError;
use stepwise_core::handshake::{ArtifactError, SheetError, SupplyError};
use stepwise_core::help::HelpError;
use stepwise_core::llm::{ErrorCode, ProviderError, SettingsError};
use stepwise_core::owner::AuthError;
use stepwise_core::pubmed::PubmedError;
use stepwise_core::registry::ContextError;
use stepwise_core::research::ResearchError;
use stepwise_core::streams::StreamError;
use stepwise_core::workflow::{ActionError, SpecError};
use worker::{Response, console_error};

/// An error answered to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppError {
    status: u16,
    code: &'static str,
    message: String,
    /// Seconds a limited client should wait (`Retry-After`).
    retry_after: Option<u32>,
}

/// The result type of handlers and services.
pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        AppError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// 415 `unsupported_media_type`: a body that is not `application/json`.
    pub fn unsupported_media_type() -> Self {
        let message = "send the body as application/json";
        AppError::new(415, "unsupported_media_type", message)
    }

    /// 429 `rate_limited`: too many requests; retry after `seconds`.
    pub fn rate_limited(seconds: u32) -> Self {
        let message = format!("too many requests; try again in {seconds} seconds");
        AppError {
            retry_after: Some(seconds),
            ..AppError::new(429, "rate_limited", message)
        }
    }

    /// 429 `quota_exceeded`: a daily cap on model calls is reached (`message` says which).
    pub fn quota_exceeded(message: &str) -> Self {
        AppError {
            retry_after: Some(3600),
            ..AppError::new(429, "quota_exceeded", message)
        }
    }

    /// 503 `model_calls_disabled`: the operator's kill switch is on.
    pub fn model_calls_disabled() -> Self {
        let message = "model calls are switched off on this server for now";
        AppError::new(503, "model_calls_disabled", message)
    }

    /// 400 `invalid_json`: the body is not JSON.
    pub fn invalid_json(detail: impl std::fmt::Display) -> Self {
        let message = format!("the body is not valid JSON: {detail}");
        AppError::new(400, "invalid_json", message)
    }

    /// 403 `forbidden`: a missing or wrong credential for an existing resource or an admin route.
    pub fn forbidden(message: impl Into<String>) -> Self {
        AppError::new(403, "forbidden", message)
    }

    /// 403 `challenge_required`: a new anonymous owner's first model call needs a solved
    /// Turnstile check (`turnstile.rs`).
    pub fn challenge_required(message: impl Into<String>) -> Self {
        AppError::new(403, "challenge_required", message)
    }

    /// 404 `not_found` for an unknown resource (`what` names it: "research", "report").
    pub fn not_found(what: &str) -> Self {
        AppError::new(404, "not_found", format!("{what} not found"))
    }

    /// 409 with `code`: the resource's state refuses the request now.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        AppError::new(409, code, message)
    }

    /// 404 `conversation_not_found`: a conversation id the server does not hold.
    pub fn conversation_not_found() -> Self {
        let message = "no such conversation; start a new one without conversation_id";
        AppError::new(404, "conversation_not_found", message)
    }

    /// 404 `unknown_workflow`.
    pub fn unknown_workflow(id: &str) -> Self {
        AppError::new(404, "unknown_workflow", format!("no workflow `{id}`"))
    }

    /// 405 `method_not_allowed` on a known path.
    pub fn method_not_allowed() -> Self {
        let message = "this method is not allowed here";
        AppError::new(405, "method_not_allowed", message)
    }

    /// 413 `body_too_large`.
    pub fn body_too_large(limit: usize) -> Self {
        let message = format!("the body is larger than {limit} bytes");
        AppError::new(413, "body_too_large", message)
    }

    /// 422 `invalid_request`: the body's shape or a parameter is wrong (the message says where).
    pub fn invalid_request(message: impl Into<String>) -> Self {
        AppError::new(422, "invalid_request", message)
    }

    /// 422 `confirmation_required`: an irreversible request without the confirmation it needs.
    pub fn confirmation_required(message: impl Into<String>) -> Self {
        AppError::new(422, "confirmation_required", message)
    }

    /// 422 `invalid_spec`: a spec stored under another id than its own.
    pub fn invalid_spec_id(spec_id: &str, path_id: &str) -> Self {
        let message = format!("the spec's id `{spec_id}` is not `{path_id}`");
        AppError::new(422, "invalid_spec", message)
    }

    /// 422 `unknown_provider`: a request names a provider that is not configured.
    pub fn unknown_provider(name: &str) -> Self {
        let message = format!("provider `{name}` is not configured");
        AppError::new(422, "unknown_provider", message)
    }

    /// 422 `workflow_mismatch`: a request names another workflow than its conversation's.
    pub fn workflow_mismatch(conversation: &str, workflow: &str) -> Self {
        let message = format!("conversation `{conversation}` uses workflow `{workflow}`");
        AppError::new(422, "workflow_mismatch", message)
    }

    /// 409 `limit_reached`: an owner holds the most of something (`message` says what).
    pub fn limit_reached(message: &str) -> Self {
        AppError::new(409, "limit_reached", message)
    }

    /// 429 `too_many_streams`: a job already serves its most event streams.
    pub fn too_many_streams() -> Self {
        let message = "this job has too many open event streams";
        AppError::new(429, "too_many_streams", message)
    }

    /// 502 `upstream_unreachable`: a service the Worker calls (`what`) could not be reached or
    /// did not answer in time; nothing was made up in its place.
    pub fn upstream_unreachable(what: &str) -> Self {
        let message = format!("{what} could not be reached; try again later");
        AppError::new(502, "upstream_unreachable", message)
    }

    /// 502 `upstream_error`: a service the Worker calls answered with an error.
    pub fn upstream_error(message: impl Into<String>) -> Self {
        AppError::new(502, "upstream_error", message)
    }

    /// The error a Durable Object answered (`{"error": {"code", "message"}}` with `status`),
    /// as the same error here; an answer of another shape is an internal error.
    pub fn relayed(status: u16, body: &str) -> Self {
        let body: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        let error = &body["error"];
        let known = [
            "conversation_not_found",
            "forbidden",
            "turn_in_progress",
            "stale_turn",
            "turn_expired",
            "conversation_full",
            "invalid_request",
            "invalid_json",
            "help_session_not_found",
            "lease_expired",
            "session_escalated",
            "session_closed",
            "session_full",
            "not_escalated",
            "context_request_not_found",
            "context_missing",
            "context_pending",
            "unknown_slot",
            "request_closed",
            "invalid_supply",
            "too_many_watchers",
            "card_not_found",
            "card_settled",
            "approval_not_found",
            "approval_settled",
            "approval_expired",
            "invalid_arguments",
            // What a help-desk turn run by its session's object can end with.
            "turn_stopped",
            "upstream_error",
            "upstream_unreachable",
            "bad_stream",
            "auth",
            "timeout",
            "rate_limited",
            "quota_exceeded",
            "model_calls_disabled",
            "challenge_required",
            "empty_message",
            "message_too_long",
        ];
        match known.iter().find(|code| error["code"] == **code) {
            Some(code) => AppError::new(status, code, error["message"].as_str().unwrap_or("")),
            None => AppError::internal(&format_args!("object answered {status}: {body}")),
        }
    }

    /// 500 `internal`: the detail is logged, the client gets a generic message.
    pub fn internal(detail: &dyn std::fmt::Display) -> Self {
        console_error!("internal error: {detail}");
        AppError::new(500, "internal", "an internal error occurred")
    }

    /// 500 `misconfigured`: a setting is invalid (the reason names the setting, never a value).
    pub fn misconfigured(reason: impl std::fmt::Display) -> Self {
        AppError::new(500, "misconfigured", reason.to_string())
    }

    /// Its HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Its machine code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// Its message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON response for this error (with `Retry-After` when limited, `WWW-Authenticate`
    /// when an owner is needed).
    pub fn to_response(&self) -> worker::Result<Response> {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        let mut response = Response::from_json(&body)?.with_status(self.status);
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .set("retry-after", &seconds.to_string())?;
        }
        if self.status == 401 {
            response
                .headers_mut()
                .set("www-authenticate", "Bearer realm=\"stepwise\"")?;
        }
        Ok(response)
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

impl From<worker::Error> for AppError {
    fn from(error: worker::Error) -> Self {
        AppError::internal(&error)
    }
}

impl From<serde_json::Error> for AppError {
    fn from(error: serde_json::Error) -> Self {
        AppError::internal(&error)
    }
}

impl From<worker::kv::KvError> for AppError {
    fn from(error: worker::kv::KvError) -> Self {
        AppError::internal(&error)
    }
}

/// A rejected user action or the state it came with: 422 with the core's code.
impl From<ActionError> for AppError {
    fn from(error: ActionError) -> Self {
        AppError::new(422, error.code(), error.to_string())
    }
}

/// A workflow spec refused on load: 422 `invalid_spec` / `invalid_spec_json`.
impl From<SpecError> for AppError {
    fn from(error: SpecError) -> Self {
        AppError::new(422, error.code(), error.to_string())
    }
}

/// Provider settings that do not hold: 500 `misconfigured` with the reason.
impl From<SettingsError> for AppError {
    fn from(error: SettingsError) -> Self {
        AppError::misconfigured(error)
    }
}

/// No owner, or a credential that does not hold: 401.
impl From<AuthError> for AppError {
    fn from(error: AuthError) -> Self {
        AppError::new(401, error.code(), error.to_string())
    }
}

/// A research command refused by the core.
impl From<ResearchError> for AppError {
    fn from(error: ResearchError) -> Self {
        let status = match &error {
            ResearchError::NotFound => 404,
            ResearchError::Conflict { .. } | ResearchError::Exists | ResearchError::Changed => 409,
            ResearchError::NoProvidersSelected
            | ResearchError::ProviderNotConfigured(_)
            | ResearchError::InvalidDraft(_)
            | ResearchError::InvalidRecord(_) => 422,
            _ => 422,
        };
        AppError::new(status, error.code(), error.to_string())
    }
}

/// A conversation command refused by the core.
impl From<ConversationError> for AppError {
    fn from(error: ConversationError) -> Self {
        let status = match &error {
            ConversationError::NotFound
            | ConversationError::NoSuchRequest
            | ConversationError::NoSuchCard
            | ConversationError::Approval(ApprovalError::NotFound) => 404,
            ConversationError::Forbidden => 403,
            ConversationError::Approval(
                ApprovalError::InvalidArguments(_) | ApprovalError::ReasonTooLong,
            ) => 422,
            ConversationError::Supply(SupplyError::Invalid(_) | SupplyError::UnknownSlot(_)) => 422,
            _ => 409,
        };
        AppError::new(status, error.code(), error.to_string())
    }
}

/// A key path that is not an artifact (422), or names nothing the caller owns (404).
impl From<ArtifactError> for AppError {
    fn from(error: ArtifactError) -> Self {
        let status = match error {
            ArtifactError::InvalidKeyPath(_) => 422,
            ArtifactError::NotFound(_) => 404,
        };
        AppError::new(status, error.code(), error.to_string())
    }
}

/// A prompt sheet refused at PUT, with its line and reason.
impl From<SheetError> for AppError {
    fn from(error: SheetError) -> Self {
        AppError::new(422, "invalid_prompt_sheet", error.to_string())
    }
}

/// A help-desk message, article or session command refused by the core.
impl From<HelpError> for AppError {
    fn from(error: HelpError) -> Self {
        let status = match &error {
            HelpError::EmptyMessage | HelpError::InvalidDoc(_) => 422,
            HelpError::MessageTooLong(_) => 413,
            HelpError::NotFound => 404,
            _ => 409,
        };
        AppError::new(status, error.code(), error.to_string())
    }
}

/// A saved stream that cannot be made or changed so.
impl From<StreamError> for AppError {
    fn from(error: StreamError) -> Self {
        match error {
            StreamError::Action(action) => action.into(),
            StreamError::NotConfirmed(_) => AppError::new(409, error.code(), error.to_string()),
            other => AppError::new(422, other.code(), other.to_string()),
        }
    }
}

/// A search refused before any request (422), or an answer PubMed sent that could not be read.
impl From<PubmedError> for AppError {
    fn from(error: PubmedError) -> Self {
        let status = match error {
            PubmedError::InvalidSearch(_) => 422,
            PubmedError::BadAnswer(_) => 502,
        };
        AppError::new(status, error.code(), error.to_string())
    }
}

/// A page context that does not hold.
impl From<ContextError> for AppError {
    fn from(error: ContextError) -> Self {
        AppError::new(422, "invalid_context", error.to_string())
    }
}

/// A model call that failed upstream (JSON mode of a chat turn): the normalized code decides.
impl From<ProviderError> for AppError {
    fn from(error: ProviderError) -> Self {
        let status = match error.code {
            ErrorCode::Timeout => 504,
            ErrorCode::RateLimited => 429,
            ErrorCode::ModelCallsDisabled => 503,
            ErrorCode::Auth
            | ErrorCode::UpstreamError
            | ErrorCode::BadStream
            | ErrorCode::AnswerTooLong => 502,
        };
        AppError::new(status, error.code.as_str(), error.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepwise_core::research::ResearchStatus;

    #[track_caller]
    fn check(error: impl Into<AppError>, status: u16, code: &str) {
        let error = error.into();
        assert_eq!((error.status, error.code), (status, code));
        assert!(!error.message.is_empty());
    }

    #[test]
    fn every_core_error_kind_answers_its_status_and_code() {
        check(ResearchError::NotFound, 404, "not_found");
        check(ResearchError::Exists, 409, "conflict");
        let conflict = ResearchError::Conflict {
            action: "retry",
            status: ResearchStatus::Draft,
        };
        check(conflict, 409, "conflict");
        check(ResearchError::Changed, 409, "job_changed");
        check(
            ResearchError::NoProvidersSelected,
            422,
            "no_providers_selected",
        );
        let unknown = ResearchError::ProviderNotConfigured("x".into());
        check(unknown, 422, "provider_not_configured");
        check(
            ResearchError::InvalidDraft("empty".into()),
            422,
            "invalid_draft",
        );
        check(ActionError::UnknownField("x".into()), 422, "unknown_field");
        check(SpecError::NoSteps, 422, "invalid_spec");
        check(
            ProviderError::new(ErrorCode::Timeout, "slow"),
            504,
            "timeout",
        );
        let limited = ProviderError::new(ErrorCode::RateLimited, "slow down");
        check(limited, 429, "rate_limited");
        check(ProviderError::new(ErrorCode::Auth, "bad key"), 502, "auth");
        check(
            ProviderError::new(ErrorCode::BadStream, "cut"),
            502,
            "bad_stream",
        );
        check(AuthError::OwnerRequired, 401, "owner_required");
        check(AuthError::Expired, 401, "invalid_token");
        check(
            ResearchError::InvalidRecord("x".into()),
            422,
            "invalid_record",
        );
        check(AppError::rate_limited(60), 429, "rate_limited");
        check(
            AppError::model_calls_disabled(),
            503,
            "model_calls_disabled",
        );
        check(
            AppError::unsupported_media_type(),
            415,
            "unsupported_media_type",
        );
        check(ConversationError::NotFound, 404, "conversation_not_found");
        check(ConversationError::Forbidden, 403, "forbidden");
        check(ConversationError::TurnInProgress, 409, "turn_in_progress");
        let stale = ConversationError::StaleTurn {
            stated: 1,
            current: 2,
        };
        check(stale, 409, "stale_turn");
        check(ConversationError::Full, 409, "conversation_full");
        check(
            StreamError::NotConfirmed("review".into()),
            409,
            "not_confirmed",
        );
        check(StreamError::Invalid("x".into()), 422, "invalid_stream");
        check(
            PubmedError::InvalidSearch("x".into()),
            422,
            "invalid_search",
        );
        check(PubmedError::BadAnswer("x".into()), 502, "upstream_error");
        check(
            AppError::upstream_unreachable("PubMed"),
            502,
            "upstream_unreachable",
        );
    }

    #[test]
    fn errors_answered_by_an_object_come_back_the_same() {
        let stale = AppError::from(ConversationError::StaleTurn {
            stated: 1,
            current: 2,
        });
        let body = serde_json::json!({"error": {"code": stale.code, "message": stale.message}});
        assert_eq!(AppError::relayed(409, &body.to_string()), stale);
    }
}

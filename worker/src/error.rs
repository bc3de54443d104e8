//! The Worker's one error type, mapped to an HTTP status and `{"error": {"code", "message"}}`.
//! Internal details are logged, never echoed to the client.

use stepwise_core::workflow::ActionError;
use worker::{Response, console_error};

/// An error answered to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppError {
    /// HTTP status.
    pub status: u16,
    /// Stable machine code.
    pub code: String,
    /// Human message, safe to show.
    pub message: String,
}

impl AppError {
    /// A client or upstream error with a status, a code and a message.
    pub fn new(status: u16, code: &str, message: impl Into<String>) -> Self {
        AppError {
            status,
            code: code.to_owned(),
            message: message.into(),
        }
    }

    /// 404 for an unknown resource.
    pub fn not_found(what: &str) -> Self {
        AppError::new(404, "not_found", format!("{what} not found"))
    }

    /// 500: the detail is logged, the client gets a generic message.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        console_error!("internal error: {detail}");
        AppError::new(500, "internal", "an internal error occurred")
    }

    /// The JSON response for this error.
    pub fn to_response(&self) -> worker::Result<Response> {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        Ok(Response::from_json(&body)?.with_status(self.status))
    }
}

impl From<worker::Error> for AppError {
    fn from(error: worker::Error) -> Self {
        AppError::internal(error)
    }
}

impl From<ActionError> for AppError {
    fn from(error: ActionError) -> Self {
        AppError::new(422, error.code(), error.to_string())
    }
}

/// The result type of handlers.
pub type AppResult<T> = Result<T, AppError>;

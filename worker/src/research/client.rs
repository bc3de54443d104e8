//! Talking to a job's Durable Object (one per research id, named by the id) in plain HTTP:
//! `GET /` reads the job, `GET /events` opens its events stream, `POST /` applies a
//! [`Command`] and answers with the job; a claim is answered with the prompt to send as text
//! (200) or, when this delivery does not make the call, 204. No envelope type crosses, so none
//! needs a serde reader.

use stepwise_core::research::Command;
use worker::{Env, Headers, Method, Request, RequestInit, Response};

use crate::platform::error::{AppError, AppResult};
use crate::platform::{ids, objects};

/// The Durable Object binding's name in wrangler.toml.
pub const BINDING: &str = "RESEARCH";
/// The header carrying the public origin of a start request (for share links).
pub const ORIGIN_HEADER: &str = "x-stepwise-origin";

/// What to ask of a job's object.
pub enum JobRequest<'a> {
    /// Read the job.
    Get,
    /// Open its events stream.
    Events,
    /// Apply a command; `origin` is the public origin of the request, kept for share links.
    Apply {
        /// The command.
        command: &'a Command,
        /// The request's public origin, when it matters.
        origin: Option<&'a str>,
    },
}

/// Sends a request to the job `id` and returns its answer (errors come back as responses);
/// 404 for a string that is not a research id.
pub async fn send(env: &Env, id: &str, request: JobRequest<'_>) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("research"));
    }
    let mut init = RequestInit::new();
    let url = match request {
        JobRequest::Get => "https://job.internal/",
        JobRequest::Events => "https://job.internal/events",
        JobRequest::Apply { command, origin } => {
            let headers = Headers::new();
            if let Some(origin) = origin {
                headers.set(ORIGIN_HEADER, origin)?;
            }
            init.with_method(Method::Post)
                .with_headers(headers)
                .with_body(Some(serde_json::to_string(command)?.into()));
            "https://job.internal/"
        }
    };
    let request = Request::new_with_init(url, &init)?;
    objects::fetch(env, BINDING, id, request).await
}

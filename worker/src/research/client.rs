//! Talking to a job's Durable Object (one per research id, named by the id) in plain HTTP, on
//! behalf of a caller (header `x-stepwise-caller`: `owner:<owner id>`, `system` or `admin`):
//! `GET /` reads the job, `GET /events` opens its events stream, `POST /` applies a [`Command`]
//! and answers with the job (204 when the command deleted it); a claim is answered with the
//! prompt to send as text (200) or, when this delivery does not make the call, 204. No envelope
//! type crosses, so none needs a serde reader.

use stepwise_core::research::{Caller, Command};
use worker::{Env, Headers, Method, Request, RequestInit, Response};

use crate::platform::error::{AppError, AppResult};
use crate::platform::{ids, objects};

/// The Durable Object binding's name in wrangler.toml.
pub const BINDING: &str = "RESEARCH";
/// The header naming who asks.
pub const CALLER_HEADER: &str = "x-stepwise-caller";

/// What to ask of a job's object.
pub enum JobRequest<'a> {
    /// Read the job.
    Get,
    /// Open its events stream.
    Events,
    /// Apply a command.
    Apply(&'a Command),
}

/// The header form of a caller.
pub fn caller_header(caller: &Caller) -> String {
    match caller {
        Caller::Owner(owner) => format!("owner:{owner}"),
        Caller::System => "system".to_owned(),
        Caller::Admin => "admin".to_owned(),
    }
}

/// The caller a header names; `None` for anything else.
pub fn parse_caller(header: &str) -> Option<Caller> {
    match header {
        "system" => Some(Caller::System),
        "admin" => Some(Caller::Admin),
        _ => header
            .strip_prefix("owner:")
            .filter(|id| !id.is_empty())
            .map(|id| Caller::Owner(id.to_owned())),
    }
}

/// Sends a request to the job `id` for `caller` and returns its answer (errors come back as
/// responses); 404 for a string that is not a research id.
pub async fn send(
    env: &Env,
    id: &str,
    caller: &Caller,
    request: JobRequest<'_>,
) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("research"));
    }
    let headers = Headers::new();
    headers.set(CALLER_HEADER, &caller_header(caller))?;
    let mut init = RequestInit::new();
    let url = match request {
        JobRequest::Get => "https://job.internal/",
        JobRequest::Events => "https://job.internal/events",
        JobRequest::Apply(command) => {
            init.with_method(Method::Post)
                .with_body(Some(serde_json::to_string(command)?.into()));
            "https://job.internal/"
        }
    };
    init.with_headers(headers);
    let request = Request::new_with_init(url, &init)?;
    objects::fetch(env, BINDING, id, request).await
}

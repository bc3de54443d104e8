//! Talking to a job's Durable Object (one per research id, named by the id).

use worker::{Env, Response};

use super::messages::JobRequest;
use crate::platform::error::{AppError, AppResult};
use crate::platform::{ids, objects};

/// The Durable Object binding's name in wrangler.toml.
pub const BINDING: &str = "RESEARCH";

/// Sends a request to the job `id` and returns its answer (errors come back as responses);
/// 404 for a string that is not a research id.
pub async fn send(env: &Env, id: &str, request: &JobRequest) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("research"));
    }
    objects::send(env, BINDING, id, request).await
}

//! Durable Object stubs: one request to the object named `name` of a binding. The object's
//! answer (errors included) comes back as its HTTP response.

use worker::{Env, Request, Response};

use super::error::AppResult;

/// Sends `request` to the object `name` of `binding` and returns its response.
pub async fn fetch(env: &Env, binding: &str, name: &str, request: Request) -> AppResult<Response> {
    let stub = env
        .durable_object(binding)?
        .id_from_name(name)?
        .get_stub()?;
    Ok(stub.fetch_with_request(request).await?)
}

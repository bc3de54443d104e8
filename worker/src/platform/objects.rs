//! Durable Object stubs: one request to the object named `name` of a binding, carrying a JSON
//! body. The object's answer (errors included) comes back as its HTTP response.

use serde::Serialize;
use worker::{Env, Method, Request, RequestInit, Response};

use super::error::AppResult;

/// Sends `body` as JSON to the object `name` of `binding` and returns its response.
pub async fn send<T: Serialize>(
    env: &Env,
    binding: &str,
    name: &str,
    body: &T,
) -> AppResult<Response> {
    let stub = env
        .durable_object(binding)?
        .id_from_name(name)?
        .get_stub()?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(serde_json::to_string(body)?.into()));
    let request = Request::new_with_init("https://object.internal/", &init)?;
    Ok(stub.fetch_with_request(request).await?)
}

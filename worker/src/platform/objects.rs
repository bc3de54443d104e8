//! Durable Object stubs: one request to the object named `name` of a binding. The object's
//! answer (errors included) comes back as its HTTP response, or, for a JSON command, as the
//! text of a 200 answer and the object's own error otherwise.

use worker::{Env, Request, Response};

use super::error::{AppError, AppResult};
use super::js::{ObjectCall, call_object};

/// Sends `request` to the object `name` of `binding` and returns its response.
pub async fn fetch(env: &Env, binding: &str, name: &str, request: Request) -> AppResult<Response> {
    let stub = env
        .durable_object(binding)?
        .id_from_name(name)?
        .get_stub()?;
    Ok(stub.fetch_with_request(request).await?)
}

/// POSTs the JSON `body` with `headers` to the object `name` of `binding`: the text of its 200
/// answer, or the error it answered, as the same [`AppError`].
pub async fn command(
    env: &Env,
    binding: &str,
    name: &str,
    headers: &[(&str, &str)],
    body: String,
) -> AppResult<String> {
    let mut sent = vec![("content-type", "application/json")];
    sent.extend_from_slice(headers);
    let call = ObjectCall {
        method: "POST",
        url: &format!("https://{binding}.internal/"),
        headers: &sent,
        body: Some(&body),
    };
    let (status, text) = call_object(env, binding, name, call).await?;
    if status == 200 {
        return Ok(text);
    }
    Err(AppError::relayed(status, &text))
}

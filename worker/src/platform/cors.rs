//! CORS: same-origin by default; origins listed in `ALLOWED_ORIGINS` may call cross-origin.

use worker::{Headers, Response, Result};

const ALLOWED_METHODS: &str = "GET, POST, PUT, DELETE, OPTIONS";
const ALLOWED_HEADERS: &str = "content-type, accept, authorization, x-conversation-token, x-stepwise-deltas, x-stepwise-format, last-event-id, mcp-protocol-version, mcp-session-id";
const EXPOSED_HEADERS: &str = "x-stepwise-persisted, x-stepwise-conversation, x-stepwise-session, x-stepwise-waiting, x-conversation-token, retry-after, mcp-session-id";

fn is_allowed(origin: Option<&str>, allowed: &str) -> Option<String> {
    let origin = origin?;
    allowed
        .split(',')
        .map(str::trim)
        .any(|o| !o.is_empty() && o == origin)
        .then(|| origin.to_owned())
}

/// Whether a browser page of `origin` may open a WebSocket here (or call `/mcp`, whose
/// protocol asks servers to check `Origin` against DNS rebinding): a WebSocket upgrade is not
/// subject to CORS, so the Worker checks the `Origin` itself (behind Access, where the browser
/// authenticates by cookie, another site's page could otherwise connect as the user). Only the
/// Worker's own origin (`own`, e.g. `https://stepwise.example.com`) and `ALLOWED_ORIGINS` may;
/// a client that sends no `Origin` is no browser page and carries its own credentials.
pub fn may_connect(origin: Option<&str>, own: &str, allowed: &str) -> bool {
    match origin {
        None => true,
        Some(origin) => origin == own || is_allowed(Some(origin), allowed).is_some(),
    }
}

/// The answer to a preflight: the allowlisted origin gets the CORS headers, others a bare 204.
pub fn preflight(origin: Option<&str>, allowed: &str) -> Result<Response> {
    let mut response = Response::empty()?.with_status(204);
    if let Some(origin) = is_allowed(origin, allowed) {
        let headers = response.headers_mut();
        headers.set("access-control-allow-origin", &origin)?;
        headers.set("access-control-allow-methods", ALLOWED_METHODS)?;
        headers.set("access-control-allow-headers", ALLOWED_HEADERS)?;
        headers.set("access-control-max-age", "600")?;
        headers.set("vary", "origin")?;
    }
    Ok(response)
}

/// Adds the CORS headers to a response for an allowlisted origin. The headers are copied into
/// a new set first: a response that came back from a Durable Object has immutable headers.
pub fn decorate(response: Response, origin: Option<&str>, allowed: &str) -> Result<Response> {
    let Some(origin) = is_allowed(origin, allowed) else {
        return Ok(response);
    };
    let headers = Headers::new();
    for (name, value) in response.headers().entries() {
        headers.append(&name, &value)?;
    }
    headers.set("access-control-allow-origin", &origin)?;
    headers.set("access-control-expose-headers", EXPOSED_HEADERS)?;
    headers.set("vary", "origin")?;
    Ok(response.with_headers(headers))
}

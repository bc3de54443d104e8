//! `/mcp`: Stepwise as a Model Context Protocol server over Streamable HTTP, for MCP clients
//! (desktop assistants, IDE agents, other agents) connecting with the owner token as a bearer
//! token. `POST` takes one JSON-RPC message: a request is answered with one JSON-RPC response
//! as `application/json` (or, for `research_start`, an SSE stream of its question, progress and
//! result); a notification or a response is accepted with 202. `initialize` answers an
//! `Mcp-Session-Id`: the session's object (`session.rs`) then takes every message naming it, so
//! that a question asked through elicitation and the client's answer, POSTed separately, meet.
//! A request without a session is answered on its own (every read-only tool works so). A long
//! call's events have ids: `GET` with the session and `Last-Event-ID` resumes its stream after a
//! dropped connection (`resume.rs`); any other `GET` (a server-initiated stream) answers 405;
//! `DELETE` with the session ends it. The rules
//! (messages, negotiation, tools and their schemas, resource URIs, elicitation forms) are
//! `core::mcp`; the calls are performed in [`calls`] and `start.rs`, as the owner, rate
//! limited like the rest of the API.

mod ask;
mod calls;
mod guided;
mod person;
mod resume;
pub mod session;
mod start;

use serde_json::Value;
use stepwise_core::mcp::elicitation::supports_forms;
use stepwise_core::mcp::jsonrpc::{
    self, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, Incoming, RpcError,
};
use stepwise_core::mcp::server::{self, Call};
use stepwise_core::mcp::tools::ToolCall;
use worker::{Env, Headers, Method, Request, RequestInit, Response};

use self::person::tool_error;
use self::session::SessionInfo;

use crate::platform::body::{read_json_text, require_json};
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;
use crate::platform::{cors, ids, limits, objects, settings};

/// The header naming the protocol revision of every request after `initialize`.
pub(super) const VERSION_HEADER: &str = "mcp-protocol-version";
/// The header naming the session, answered by `initialize` and sent with every later request.
const SESSION_HEADER: &str = "mcp-session-id";
/// The header naming the last event a resuming client saw.
pub(super) const LAST_EVENT_HEADER: &str = "last-event-id";
/// What `research_start` answers outside a session.
const NEEDS_SESSION: &str = "research_start asks you to approve the job before it starts, through elicitation: use a client that declares the `elicitation` capability, connected with a session (its `initialize` answers an Mcp-Session-Id).";

/// `GET /mcp` (a server-initiated stream), and `DELETE` without a session: 405; every message
/// of this server's is sent on the response of the request it belongs to (or its resumption).
pub fn no_sessions() -> AppResult<Response> {
    let why = RpcError::new(
        INVALID_REQUEST,
        "this server opens no stream of its own: POST each JSON-RPC message to /mcp",
    );
    let mut response = rpc_response(&jsonrpc::error(None, &why), 405)?;
    response.headers_mut().set("allow", "POST")?;
    Ok(response)
}

/// `POST /mcp`: one JSON-RPC message of `owner`. A browser page's request from an origin that
/// is neither the Worker's nor in `ALLOWED_ORIGINS` is refused (403), as the protocol asks.
pub async fn serve(mut req: Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    check_origin(&req, env)?;
    if let Some(version) = req.headers().get(VERSION_HEADER)?
        && !server::speaks(&version)
    {
        let why = RpcError {
            data: Some(
                serde_json::json!({"supported": server::PROTOCOL_VERSIONS, "requested": version}),
            ),
            ..RpcError::new(
                INVALID_REQUEST,
                format!("protocol version `{version}` is not supported"),
            )
        };
        return rpc_response(&jsonrpc::error(None, &why), 400);
    }
    if !accepts_json(&req)? {
        let why = RpcError::new(
            INVALID_REQUEST,
            "accept application/json (and text/event-stream)",
        );
        return rpc_response(&jsonrpc::error(None, &why), 406);
    }
    require_json(&req)?;
    limits::rate_limit(&req, env, owner).await?;
    let text = read_json_text(&mut req).await?;
    let parsed = jsonrpc::read(&text);
    // A call that can start model calls passes the kill switch first, as every model route
    // (answered as the tool's error, which the model reads).
    if let Ok(Incoming::Request { id, method, params }) = &parsed
        && method == "tools/call"
        && params.get("name").and_then(Value::as_str) == Some("research_start")
        && limits::calls_disabled(env)
    {
        let why = "Not started: model calls are switched off on this server for now.";
        let result = tool_error(why);
        return rpc_response(&jsonrpc::result(id, result), 200);
    }
    if let Some(session) = req.headers().get(SESSION_HEADER)? {
        let mut headers = passed_on(&req, VERSION_HEADER)?;
        if accepts_events(&req)? {
            headers.push((session::STREAMS_HEADER, "1".to_owned()));
        }
        return forward(env, owner, &session, "/message", Some(text), &headers).await;
    }
    let (id, method, params) = match parsed {
        Err((id, error)) => return rpc_response(&jsonrpc::error(id.as_ref(), &error), 400),
        Ok(Incoming::Notification { .. } | Incoming::Response { .. }) => {
            return Ok(Response::empty()?.with_status(202));
        }
        Ok(Incoming::Request { id, method, params }) => (id, method, params),
    };
    let answered = match server::route(&method, &params, env!("CARGO_PKG_VERSION")) {
        Err(error) => Err(error),
        Ok(call) => perform(env, owner, call).await,
    };
    let mut session_id = None;
    if let (Ok(result), "initialize") = (&answered, method.as_str()) {
        // The session the client names from now on: where its questions are answered.
        let info = SessionInfo {
            owner: owner.id.clone(),
            version: result["protocolVersion"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            elicitation: supports_forms(params.get("capabilities").unwrap_or(&Value::Null)),
            created_at: now_ms(),
        };
        // Without its session the client still has every tool that asks nothing.
        session_id = match session::begin(env, &info).await {
            Ok(id) => Some(id),
            Err(error) => {
                worker::console_warn!("mcp: no session started: {error}");
                None
            }
        };
    }
    let message = match answered {
        Ok(result) => jsonrpc::result(&id, result),
        Err(error) => jsonrpc::error(Some(&id), &error),
    };
    let mut response = rpc_response(&message, 200)?;
    if let Some(session_id) = session_id {
        response.headers_mut().set(SESSION_HEADER, &session_id)?;
    }
    Ok(response)
}

/// `DELETE /mcp` with `Mcp-Session-Id`: ends the session (204; 404 for one that is not the
/// caller's or no longer exists).
pub async fn end(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    check_origin(req, env)?;
    limits::rate_limit(req, env, owner).await?;
    match req.headers().get(SESSION_HEADER)? {
        Some(session) => forward(env, owner, &session, "/end", None, &[]).await,
        None => no_sessions(),
    }
}

/// Whether a request resumes a call's stream: `GET /mcp` with `Mcp-Session-Id` and
/// `Last-Event-ID`.
pub fn resumes(req: &Request) -> bool {
    let has = |name| req.headers().get(name).ok().flatten().is_some();
    req.method() == Method::Get && has(SESSION_HEADER) && has(LAST_EVENT_HEADER)
}

/// `GET /mcp` with `Mcp-Session-Id` and `Last-Event-ID`: the client's connection to a call's
/// stream dropped, and it resumes after the last event it saw: every later event once, in
/// order, then the live ones (`resume.rs`). 404 for a stream the session does not hold.
pub async fn resume(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    check_origin(req, env)?;
    limits::rate_limit(req, env, owner).await?;
    let Some(session) = req.headers().get(SESSION_HEADER)? else {
        return no_sessions();
    };
    let mut headers = passed_on(req, VERSION_HEADER)?;
    headers.extend(passed_on(req, LAST_EVENT_HEADER)?);
    forward(env, owner, &session, "/resume", None, &headers).await
}

/// The request's header `name`, to pass on to the session's object, if it has one.
fn passed_on(req: &Request, name: &'static str) -> AppResult<Vec<(&'static str, String)>> {
    Ok(req
        .headers()
        .get(name)?
        .map(|v| (name, v))
        .into_iter()
        .collect())
}

/// Refuses a browser page of an origin that is neither the Worker's nor in `ALLOWED_ORIGINS`
/// (403), as the protocol asks of servers against DNS rebinding.
fn check_origin(req: &Request, env: &Env) -> AppResult<()> {
    let origin = req.headers().get("origin")?;
    let own = req.url()?.origin().ascii_serialization();
    let allowed = settings::var(env, "ALLOWED_ORIGINS").unwrap_or_default();
    if cors::may_connect(origin.as_deref(), &own, &allowed) {
        Ok(())
    } else {
        Err(AppError::forbidden("this page's origin may not call /mcp"))
    }
}

/// Hands a message (or the session's end) to the session's object, as `owner`; its answer
/// (JSON, or the SSE stream of a long call) goes back as it is.
async fn forward(
    env: &Env,
    owner: &Owner,
    session: &str,
    path: &str,
    body: Option<String>,
    passed: &[(&str, String)],
) -> AppResult<Response> {
    if !ids::is_id(session) {
        let why = RpcError::new(INVALID_REQUEST, "no such session: initialize again");
        return rpc_response(&jsonrpc::error(None, &why), 404);
    }
    let headers = Headers::new();
    headers.set(session::OWNER_HEADER, &serde_json::to_string(owner)?)?;
    headers.set("content-type", "application/json")?;
    for (name, value) in passed {
        headers.set(name, value)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers);
    if let Some(body) = body {
        init.with_body(Some(body.into()));
    }
    let request = Request::new_with_init(&format!("https://mcp.internal{path}"), &init)?;
    objects::fetch(env, session::BINDING, session, request).await
}

/// Performs a routed request: its result, or the JSON-RPC error to answer. A failure of the
/// platform (an object, KV, PubMed) is a JSON-RPC error too, with the API's code and message.
pub(super) async fn perform(env: &Env, owner: &Owner, call: Call) -> Result<Value, RpcError> {
    let performed = match call {
        Call::Initialize(result) | Call::ToolsList(result) | Call::ResourceTemplates(result) => {
            Ok(result)
        }
        Call::Ping => Ok(serde_json::json!({})),
        Call::ToolsCall(ToolCall::ResearchStart { .. }, _) => {
            // Only a session's object runs it (it waits for the person's answer).
            return Ok(tool_error(NEEDS_SESSION));
        }
        Call::ToolsCall(call, _progress) => calls::tool(env, owner, &call).await,
        Call::ResourcesList(cursor) => calls::resources(env, owner, cursor).await,
        Call::ResourcesRead(resource) => return calls::read_resource(env, owner, &resource).await,
    };
    performed.map_err(|error: AppError| {
        // A request's own fault (a bad cursor, a parameter) is -32602; the platform's, -32603.
        let code = if error.status() == 422 {
            INVALID_PARAMS
        } else {
            INTERNAL_ERROR
        };
        RpcError {
            data: Some(serde_json::json!({"status": error.status(), "code": error.code()})),
            ..RpcError::new(code, error.message())
        }
    })
}

/// Whether the client takes an event stream as an answer.
fn accepts_events(req: &Request) -> AppResult<bool> {
    Ok(req.headers().get("accept")?.is_some_and(|accept| {
        accept.split(',').any(|part| {
            let kind = part.split(';').next().unwrap_or("").trim();
            matches!(kind, "text/event-stream" | "text/*" | "*/*")
        })
    }))
}

/// Whether the client takes a JSON answer (no `Accept` at all counts as yes).
fn accepts_json(req: &Request) -> AppResult<bool> {
    Ok(req.headers().get("accept")?.is_none_or(|accept| {
        accept.split(',').any(|part| {
            let kind = part.split(';').next().unwrap_or("").trim();
            matches!(kind, "application/json" | "application/*" | "*/*")
        })
    }))
}

pub(super) fn rpc_response(message: &Value, status: u16) -> AppResult<Response> {
    Ok(Response::from_json(message)?.with_status(status))
}

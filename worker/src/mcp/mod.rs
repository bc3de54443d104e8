//! `/mcp`: Stepwise as a Model Context Protocol server over Streamable HTTP, for MCP clients
//! (desktop assistants, IDE agents, other agents) connecting with the owner token as a bearer
//! token. `POST` takes one JSON-RPC message: a request is answered with one JSON-RPC response
//! as `application/json`; a notification or a response is accepted with 202. The server keeps
//! no session (it assigns no `Mcp-Session-Id`): every request stands alone, so `GET` (a
//! server-initiated stream) and `DELETE` (ending a session) answer 405. The rules (messages,
//! negotiation, tools and their schemas, resource URIs) are `core::mcp`; the calls are
//! performed in [`calls`], as the owner, rate limited like the rest of the API.

mod calls;

use serde_json::Value;
use stepwise_core::mcp::jsonrpc::{
    self, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, Incoming, RpcError,
};
use stepwise_core::mcp::server::{self, Call};
use worker::{Env, Request, Response};

use crate::platform::body::{read_json_text, require_json};
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;
use crate::platform::{cors, limits, settings};

/// The header naming the protocol revision of every request after `initialize`.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// `GET` and `DELETE /mcp` (a server-initiated stream, a session's end): 405, since this server
/// keeps no sessions.
pub fn no_sessions() -> AppResult<Response> {
    let why = RpcError::new(
        INVALID_REQUEST,
        "this server keeps no sessions: POST each JSON-RPC message to /mcp",
    );
    let mut response = rpc_response(&jsonrpc::error(None, &why), 405)?;
    response.headers_mut().set("allow", "POST")?;
    Ok(response)
}

/// `POST /mcp`: one JSON-RPC message of `owner`. A browser page's request from an origin that
/// is neither the Worker's nor in `ALLOWED_ORIGINS` is refused (403), as the protocol asks.
pub async fn serve(mut req: Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let origin = req.headers().get("origin")?;
    let own = req.url()?.origin().ascii_serialization();
    let allowed = settings::var(env, "ALLOWED_ORIGINS").unwrap_or_default();
    if !cors::may_connect(origin.as_deref(), &own, &allowed) {
        return Err(AppError::forbidden("this page's origin may not call /mcp"));
    }
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
    let (id, method, params) = match jsonrpc::read(&text) {
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
    let message = match answered {
        Ok(result) => jsonrpc::result(&id, result),
        Err(error) => jsonrpc::error(Some(&id), &error),
    };
    rpc_response(&message, 200)
}

/// Performs a routed request: its result, or the JSON-RPC error to answer. A failure of the
/// platform (an object, KV, PubMed) is a JSON-RPC error too, with the API's code and message.
async fn perform(env: &Env, owner: &Owner, call: Call) -> Result<Value, RpcError> {
    let performed = match call {
        Call::Initialize(result) | Call::ToolsList(result) | Call::ResourceTemplates(result) => {
            Ok(result)
        }
        Call::Ping => Ok(serde_json::json!({})),
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

/// Whether the client takes a JSON answer (no `Accept` at all counts as yes).
fn accepts_json(req: &Request) -> AppResult<bool> {
    Ok(req.headers().get("accept")?.is_none_or(|accept| {
        accept.split(',').any(|part| {
            let kind = part.split(';').next().unwrap_or("").trim();
            matches!(kind, "application/json" | "application/*" | "*/*")
        })
    }))
}

fn rpc_response(message: &Value, status: u16) -> AppResult<Response> {
    Ok(Response::from_json(message)?.with_status(status))
}

//! What the server does with each request method, before any I/O: `initialize` answered
//! whole (version negotiation, capabilities), the rest read into a [`Call`] with its params
//! checked, or refused with the JSON-RPC error a client should see.

use serde_json::{Map, Value, json};

use super::jsonrpc::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, RpcError};
use super::resources::{ResourceUri, templates};
use super::tools::{ToolCall, list, read_call};

/// Protocol revisions this server speaks, newest first (not 2025-03-26, whose clients send
/// batches and know no `structuredContent` or resource links).
pub const PROTOCOL_VERSIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];
/// The server's name in `initialize`.
pub const SERVER_NAME: &str = "stepwise";

/// A request, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// `initialize`: the result to answer.
    Initialize(Value),
    /// `ping`: answered `{}`.
    Ping,
    /// `tools/list`: answered whole.
    ToolsList(Value),
    /// `tools/call`, and the progress token the client asked progress under.
    ToolsCall(ToolCall, Option<Value>),
    /// `resources/list`, from the cursor given.
    ResourcesList(Option<String>),
    /// `resources/templates/list`: answered whole.
    ResourceTemplates(Value),
    /// `resources/read`.
    ResourcesRead(ResourceUri),
}

/// The version to answer a client that asked for `requested`: the same when this server speaks
/// it, else the newest it speaks (the client then decides whether to go on).
///
/// ```
/// use stepwise_core::mcp::server::negotiate;
/// assert_eq!(negotiate("2025-06-18"), "2025-06-18");
/// assert_eq!(negotiate("2024-11-05"), "2025-11-25");
/// ```
pub fn negotiate(requested: &str) -> &'static str {
    PROTOCOL_VERSIONS
        .into_iter()
        .find(|v| *v == requested)
        .unwrap_or(PROTOCOL_VERSIONS[0])
}

/// Whether a request's `MCP-Protocol-Version` header names a revision this server speaks.
pub fn speaks(version: &str) -> bool {
    PROTOCOL_VERSIONS.contains(&version)
}

/// Why a request in a session that negotiated `negotiated` is refused for naming another
/// protocol version in its `MCP-Protocol-Version` header (`None`: it names none, or the same).
/// Answered with HTTP 400, as an unsupported version is: a session speaks one revision.
///
/// ```
/// use stepwise_core::mcp::server::session_version_error;
/// assert!(session_version_error("2025-11-25", Some("2025-11-25")).is_none());
/// assert!(session_version_error("2025-11-25", None).is_none());
/// let error = session_version_error("2025-11-25", Some("2025-06-18")).unwrap();
/// assert_eq!(error.data.unwrap()["negotiated"], "2025-11-25");
/// ```
pub fn session_version_error(negotiated: &str, requested: Option<&str>) -> Option<RpcError> {
    let requested = requested.filter(|requested| *requested != negotiated)?;
    Some(RpcError {
        data: Some(json!({"negotiated": negotiated, "requested": requested})),
        ..RpcError::new(
            INVALID_REQUEST,
            format!(
                "this session speaks protocol version `{negotiated}`, not `{requested}`: send the version `initialize` answered"
            ),
        )
    })
}

/// Reads request `method` with `params` (`version` is the server's own, for `initialize`).
///
/// ```
/// use serde_json::{json, Map};
/// use stepwise_core::mcp::server::{route, Call};
/// let params = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
/// let Call::Initialize(result) = route("initialize", params.as_object().unwrap(), "0.1.0").unwrap() else { panic!() };
/// assert_eq!(result["protocolVersion"], "2025-06-18");
/// assert_eq!(route("tools/destroy", &Map::new(), "0.1.0").unwrap_err().code, -32601);
/// ```
pub fn route(method: &str, params: &Map<String, Value>, version: &str) -> Result<Call, RpcError> {
    let invalid = |why: String| RpcError::new(INVALID_PARAMS, why);
    Ok(match method {
        "initialize" => Call::Initialize(initialize(params, version)?),
        "ping" => Call::Ping,
        "tools/list" => Call::ToolsList(json!({"tools": list()})),
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return Err(invalid("`name` (a string) is required".into()));
            };
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(arguments @ Value::Object(_)) => arguments.clone(),
                Some(_) => return Err(invalid("`arguments` must be an object".into())),
            };
            let progress = params
                .get("_meta")
                .and_then(|meta| meta.get("progressToken"))
                .filter(|token| token.is_string() || token.is_i64())
                .cloned();
            Call::ToolsCall(read_call(name, &arguments)?, progress)
        }
        "resources/list" => Call::ResourcesList(cursor(params)?),
        "resources/templates/list" => {
            Call::ResourceTemplates(json!({"resourceTemplates": templates()}))
        }
        "resources/read" => {
            let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                return Err(invalid("`uri` (a string) is required".into()));
            };
            let resource = ResourceUri::parse(uri).ok_or_else(|| {
                invalid(format!(
                    "`{uri}` is not a Stepwise resource (stepwise://research/<id>/synthesis or …/reports/<provider>)"
                ))
            })?;
            Call::ResourcesRead(resource)
        }
        other => {
            return Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method `{other}` is not supported by this server"),
            ));
        }
    })
}

/// `initialize`'s result: the negotiated version, the server's capabilities and who it is.
fn initialize(params: &Map<String, Value>, version: &str) -> Result<Value, RpcError> {
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "`protocolVersion` (a string) is required",
        ));
    };
    if !params.get("capabilities").is_some_and(Value::is_object) {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "`capabilities` (an object) is required",
        ));
    }
    if !params.get("clientInfo").is_some_and(Value::is_object) {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "`clientInfo` (an object) is required",
        ));
    }
    Ok(json!({
        "protocolVersion": negotiate(requested),
        "capabilities": {"tools": {"listChanged": false}, "resources": {"listChanged": false, "subscribe": false}},
        "serverInfo": {"name": SERVER_NAME, "title": "Stepwise", "version": version},
        "instructions": "Stepwise runs research jobs across several models and keeps saved research streams. Use research_status and research_result for your jobs (their texts are also resources), and stream_articles for a saved stream's PubMed search. Everything is scoped to the owner token you connect with."
    }))
}

/// A list request's `cursor`, if any.
fn cursor(params: &Map<String, Value>) -> Result<Option<String>, RpcError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(cursor)) if !cursor.is_empty() && cursor.len() <= 1024 => {
            Ok(Some(cursor.clone()))
        }
        Some(_) => Err(RpcError::new(
            INVALID_PARAMS,
            "`cursor` must be a string a list gave",
        )),
    }
}

//! JSON-RPC 2.0 as MCP uses it: one message per HTTP body (the 2025-06-18 revision dropped
//! batches), read into a request, a notification or a response, and answers written back. A
//! message that is not JSON-RPC gets the standard error codes.

use serde_json::{Map, Value, json};

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// An internal error of the server.
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP: the resource asked for does not exist (or is not the caller's).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A JSON-RPC request id: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestId {
    /// A string id.
    Text(String),
    /// An integer id.
    Number(i64),
}

impl RequestId {
    /// The id as JSON.
    pub fn to_json(&self) -> Value {
        match self {
            RequestId::Text(text) => Value::String(text.clone()),
            RequestId::Number(number) => Value::from(*number),
        }
    }

    fn from_json(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(text) => Some(RequestId::Text(text.clone())),
            Value::Number(number) => number.as_i64().map(RequestId::Number),
            _ => None,
        }
    }
}

/// One message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request, answered with a response of the same id.
    Request {
        /// Its id.
        id: RequestId,
        /// The method.
        method: String,
        /// Its params (an empty object when absent).
        params: Map<String, Value>,
    },
    /// A notification: no answer.
    Notification {
        /// The method.
        method: String,
        /// Its params (an empty object when absent).
        params: Map<String, Value>,
    },
    /// A response to a request of the server's.
    Response {
        /// The id it answers.
        id: RequestId,
        /// The result, or the error object.
        outcome: Result<Value, Value>,
    },
}

/// An error answered to a request.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC code.
    pub code: i64,
    /// What is wrong, for a person.
    pub message: String,
    /// More, for a program (MCP servers name the unsupported protocol versions here).
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The error as JSON-RPC's error object.
    pub fn to_json(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

/// Reads one message. An error comes with the id to answer it under (`None` when the message
/// had none that could be read).
///
/// ```
/// use stepwise_core::mcp::jsonrpc::{read, Incoming, RequestId, INVALID_REQUEST};
/// let ping = read(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
/// assert!(matches!(ping, Incoming::Request { id: RequestId::Number(7), ref method, .. } if method == "ping"));
/// let (id, error) = read(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
/// assert_eq!((id, error.code), (None, INVALID_REQUEST));
/// ```
pub fn read(text: &str) -> Result<Incoming, (Option<RequestId>, RpcError)> {
    let value: Value = serde_json::from_str(text).map_err(|error| {
        (
            None,
            RpcError::new(PARSE_ERROR, format!("the body is not JSON: {error}")),
        )
    })?;
    let Value::Object(mut message) = value else {
        let why =
            "send one JSON-RPC message as an object (batches are not part of MCP since 2025-06-18)";
        return Err((None, RpcError::new(INVALID_REQUEST, why)));
    };
    let id = message.get("id").and_then(RequestId::from_json);
    let invalid = |id: Option<RequestId>, why: &str| (id, RpcError::new(INVALID_REQUEST, why));
    if message.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Err(invalid(id, "`jsonrpc` must be \"2.0\""));
    }
    if message.contains_key("id") && id.is_none() {
        return Err(invalid(None, "`id` must be a string or an integer"));
    }
    match message.remove("method") {
        Some(Value::String(method)) => {
            let params = match message.remove("params") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(params)) => params,
                Some(_) => return Err(invalid(id, "`params` must be an object")),
            };
            Ok(match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::Notification { method, params },
            })
        }
        Some(_) => Err(invalid(id, "`method` must be a string")),
        None => {
            let Some(id) = id else {
                return Err(invalid(
                    None,
                    "a message needs a `method`, or an `id` it answers",
                ));
            };
            let outcome = match (message.remove("result"), message.remove("error")) {
                (Some(result), None) => Ok(result),
                (None, Some(error)) => Err(error),
                _ => return Err(invalid(Some(id), "a response has a `result` or an `error`")),
            };
            Ok(Incoming::Response { id, outcome })
        }
    }
}

/// The response carrying `result` for request `id`.
pub fn result(id: &RequestId, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_json(), "result": result})
}

/// The response carrying `error` for request `id` (`null` when the request's id was unreadable).
pub fn error(id: Option<&RequestId>, error: &RpcError) -> Value {
    let id = id.map_or(Value::Null, RequestId::to_json);
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()})
}

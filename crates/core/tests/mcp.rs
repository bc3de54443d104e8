//! The MCP server's rules replayed from `tests/vectors/mcp.json`: each body read as JSON-RPC,
//! routed, and compared with what the vector expects (the call, or the error and the id it is
//! answered under), and every answer written as a well-formed JSON-RPC response.

use serde_json::{Value, json};
use stepwise_core::mcp::jsonrpc::{self, Incoming, RequestId};
use stepwise_core::mcp::server::{Call, route};
use stepwise_core::mcp::tools::ToolCall;

fn vectors() -> Value {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/mcp.json"
    ));
    serde_json::from_str(text).expect("the vectors are JSON")
}

/// The vector's view of a routed call.
fn describe(call: &Call) -> Value {
    match call {
        Call::Initialize(_) => json!({"call": "Initialize"}),
        Call::Ping => json!({"call": "Ping"}),
        Call::ToolsList(_) => json!({"call": "ToolsList"}),
        Call::ToolsCall(tool, progress) => {
            let tool = match tool {
                ToolCall::ResearchStatus { research_id } => {
                    json!({"ResearchStatus": {"research_id": research_id}})
                }
                ToolCall::ResearchResult { research_id } => {
                    json!({"ResearchResult": {"research_id": research_id}})
                }
                ToolCall::ResearchStart {
                    prompt,
                    providers,
                    synthesis_provider,
                    wait,
                } => json!({"ResearchStart": {"prompt": prompt, "providers": providers,
                    "synthesis_provider": synthesis_provider, "wait": wait}}),
                ToolCall::HelpAsk {
                    question,
                    session_id,
                } => json!({"HelpAsk": {"question": question, "session_id": session_id}}),
                ToolCall::StreamArticles { stream_id, page } => {
                    json!({"StreamArticles": {"stream_id": stream_id, "page": page}})
                }
            };
            let mut described = json!({"call": "ToolsCall", "tool": tool});
            if let Some(progress) = progress {
                described["progress"] = progress.clone();
            }
            described
        }
        Call::ResourcesList(cursor) => json!({"call": "ResourcesList", "cursor": cursor}),
        Call::ResourceTemplates(_) => json!({"call": "ResourceTemplates"}),
        Call::ResourcesRead(uri) => json!({"call": "ResourcesRead", "uri": uri.to_uri()}),
    }
}

fn field<'a>(value: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(value, |v, key| &v[key])
}

#[test]
fn every_vector_is_read_and_routed_as_expected() {
    let vectors = vectors();
    let version = vectors["server_version"].as_str().unwrap();
    for case in vectors["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let body = match case.get("body_text") {
            Some(text) => text.as_str().unwrap().to_owned(),
            None => case["body"].to_string(),
        };
        let expect = &case["expect"];
        let (id, outcome) = match jsonrpc::read(&body) {
            Err((id, error)) => (id, Err(error)),
            Ok(Incoming::Notification { .. } | Incoming::Response { .. }) => {
                assert_eq!(expect["accepted"], true, "{name}: accepted");
                continue;
            }
            Ok(Incoming::Request { id, method, params }) => {
                (Some(id), route(&method, &params, version))
            }
        };
        match outcome {
            Ok(call) => {
                let described = describe(&call);
                for (key, value) in expect.as_object().unwrap() {
                    assert_eq!(&described[key], value, "{name}: {key}");
                }
                if let (Call::Initialize(result), Some(fields)) = (&call, case.get("result")) {
                    for (path, value) in fields.as_object().unwrap() {
                        assert_eq!(field(result, path), value, "{name}: result {path}");
                    }
                }
                let answered = jsonrpc::result(id.as_ref().unwrap(), json!({}));
                assert_eq!(answered["jsonrpc"], "2.0");
            }
            Err(error) => {
                assert_eq!(
                    json!(error.code),
                    expect["error"],
                    "{name}: code ({})",
                    error.message
                );
                let part = expect["message"].as_str().unwrap();
                assert!(
                    error.message.contains(part),
                    "{name}: `{}` lacks `{part}`",
                    error.message
                );
                let answered = jsonrpc::error(id.as_ref(), &error);
                assert_eq!(
                    answered["id"], expect["id"],
                    "{name}: answered under its id"
                );
                assert_eq!(answered["error"]["code"], expect["error"]);
            }
        }
    }
}

#[test]
fn ids_come_back_as_they_came() {
    for id in [RequestId::Text("x-1".into()), RequestId::Number(-3)] {
        let answered = jsonrpc::result(&id, json!({"ok": true}));
        assert_eq!(answered["id"], id.to_json());
        assert_eq!(answered["result"]["ok"], true);
    }
}

#[test]
fn every_listed_tool_has_an_object_schema_the_checker_understands() {
    let tools = stepwise_core::mcp::tools::list();
    for tool in tools.as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
        stepwise_core::json::check_schema_form(&tool["inputSchema"]).unwrap();
        assert!(tool["description"].as_str().unwrap().len() > 20);
    }
}

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
                ToolCall::GuidedConfigure { workflow } => {
                    json!({"GuidedConfigure": {"workflow": workflow}})
                }
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

#[test]
fn a_guided_workflow_is_walked_to_done_one_form_per_step_validated_as_the_app() {
    use stepwise_core::mcp::guided::{StepAnswer, read_step, step_request};
    use stepwise_core::workflow::{DONE_STEP, StepKind, WorkflowSpec, WorkflowState};
    let spec = WorkflowSpec::builtin("research_stream").unwrap();
    let mut state = WorkflowState {
        current_step: spec.steps[0].id.clone(),
        ..WorkflowState::default()
    };
    let mut forms = 0;
    while state.current_step != DONE_STEP {
        let step = spec.step(&state.current_step).unwrap().clone();
        let form = step_request(&spec, &step, &state.config, None);
        forms += 1;
        assert!(forms <= spec.steps.len(), "one form a step");
        let properties = &form["requestedSchema"]["properties"];
        let content = match step.kind {
            StepKind::Confirm => {
                assert!(
                    form["message"].as_str().unwrap().contains("Purpose:"),
                    "the review shows the configuration"
                );
                json!({"confirm": true})
            }
            _ if !step.required => {
                assert_eq!(properties["skip"]["type"], "boolean");
                json!({"skip": true})
            }
            StepKind::SingleChoice if !step.open => {
                // A value off the enum is refused by the core, as the app's would be.
                let off = read_step(
                    &step,
                    &Ok(json!({"action": "accept", "content": {"value": "astrology"}})),
                );
                let StepAnswer::Act(action) = off else {
                    panic!("{off:?}")
                };
                assert!(spec.apply_action(&state, &action).is_err());
                json!({"value": properties["value"]["enum"][0]})
            }
            StepKind::MultiChoice if !step.open => {
                json!({"value": [properties["value"]["items"]["enum"][0]]})
            }
            StepKind::List | StepKind::MultiChoice => json!({"value": "EGFR, osimertinib"}),
            _ => json!({"value": "Track EGFR resistance research"}),
        };
        let answer = read_step(&step, &Ok(json!({"action": "accept", "content": content})));
        let StepAnswer::Act(action) = answer else {
            panic!("{}: {answer:?}", step.id)
        };
        state = spec
            .apply_action(&state, &action)
            .unwrap_or_else(|e| panic!("{}: {e}", step.id))
            .0;
    }
    assert!(state.config.get("purpose").is_some());
    assert!(!state.skipped.is_empty(), "optional steps were skipped");
}

//! Replays the shared JSON vectors of `tests/vectors/` (also replayed by the wasm package and
//! the Worker): marker parsing at many chunkings, chat turns, step inference and spec loading.

mod common;

use common::{chunkings, display_text, parse_chunks, registry, vectors, with_defaults};
use serde_json::{Value, json};
use stepwise_core::markers::Parsed;
use stepwise_core::protocol::{ChatRequest, ChatResponse};
use stepwise_core::turn::{self, Rejection, TurnStart};
use stepwise_core::workflow::{Config, WorkflowSpec};

fn cases(file: &str) -> Vec<Value> {
    vectors(file)["cases"]
        .as_array()
        .expect("a cases array")
        .clone()
}

fn parsed_json(parsed: &Parsed) -> Value {
    let mut value = serde_json::to_value(parsed).unwrap();
    let codes: Vec<Value> = parsed
        .diagnostics
        .iter()
        .map(|d| serde_json::to_value(d.code).unwrap())
        .collect();
    value["diagnostics"] = Value::Array(codes);
    value
}

#[test]
fn marker_vectors_parse_identically_at_every_chunking() {
    let defaults = parsed_json(&Parsed::default());
    for case in cases("markers.json") {
        let name = case["name"].as_str().unwrap();
        let text = case["text"].as_str().unwrap();
        let names: Vec<String> =
            serde_json::from_value(case.get("payload_markers").cloned().unwrap_or(json!([])))
                .unwrap();
        let expected = with_defaults(defaults.clone(), &case["expect"]);
        let (whole_events, _) = parse_chunks(registry(&names), &[text]);
        for chunks in chunkings(text) {
            let (events, parsed) = parse_chunks(registry(&names), &chunks);
            assert_eq!(
                parsed_json(&parsed),
                expected,
                "{name}: parse with {} chunks",
                chunks.len()
            );
            assert_eq!(
                events,
                whole_events,
                "{name}: events with {} chunks",
                chunks.len()
            );
            if let Some(display) = case.get("display") {
                assert_eq!(
                    display_text(&events),
                    display.as_str().unwrap(),
                    "{name}: display text"
                );
            }
        }
    }
}

#[test]
fn guided_workflow_vectors_give_the_expected_responses() {
    let file = vectors("guided_workflow.json");
    let spec = WorkflowSpec::builtin(file["workflow"].as_str().unwrap()).unwrap();
    let defaults = json!({"message": "", "suggestions": [], "options": [], "skipped": [], "updated_config": {}});
    for case in cases("guided_workflow.json") {
        let name = case["name"].as_str().unwrap();
        let request: ChatRequest = serde_json::from_value(case["request"].clone())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let expect = &case["expect"];
        assert!(
            expect["response"].get("next_step").is_some(),
            "{name}: a vector must state next_step"
        );
        let expected = with_defaults(defaults.clone(), &expect["response"]);
        match (turn::begin(&spec, &request), case["model_reply"].as_str()) {
            (Ok(TurnStart::Respond(response)) | Err(Rejection { response, .. }), None) => {
                assert!(!expect["model_called"].as_bool().unwrap(), "{name}");
                assert_eq!(serde_json::to_value(&response).unwrap(), expected, "{name}");
            }
            (Ok(TurnStart::CallModel(plan)), Some(reply)) => {
                assert!(expect["model_called"].as_bool().unwrap(), "{name}");
                assert_eq!(
                    plan.step,
                    expect["context_step"].as_str().unwrap(),
                    "{name}: context step"
                );
                assert_eq!(
                    plan.messages.last().unwrap().role,
                    stepwise_core::protocol::Role::User,
                    "{name}"
                );
                for chunks in chunkings(reply) {
                    let (_, parsed) = parse_chunks(registry(&[]), &chunks);
                    let response: ChatResponse = turn::finish(&spec, &plan, parsed).response;
                    assert_eq!(
                        serde_json::to_value(&response).unwrap(),
                        expected,
                        "{name} ({} chunks)",
                        chunks.len()
                    );
                    for marker in [
                        "SUGGESTIONS:",
                        "OPTIONS:",
                        "EXTRACTED_DATA:",
                        "TARGET_FIELD:",
                        "PROPOSED_MESSAGE:",
                    ] {
                        assert!(
                            !response.message.contains(marker),
                            "{name}: marker leaked into the message"
                        );
                    }
                }
            }
            (Ok(TurnStart::Respond(response)) | Err(Rejection { response, .. }), Some(_)) => {
                panic!("{name}: expected a model call, got {response:?}")
            }
            (Ok(TurnStart::CallModel(plan)), None) => panic!(
                "{name}: expected an immediate response, got a call at {}",
                plan.step
            ),
        }
    }
}

#[test]
fn guided_workflow_vectors_cover_every_scenario_and_edge_case() {
    let covered: Vec<String> = cases("guided_workflow.json")
        .iter()
        .map(|c| c["covers"].as_str().unwrap().to_owned())
        .collect();
    for n in 1..=6 {
        assert!(
            covered
                .iter()
                .any(|c| c.starts_with(&format!("Scenario {n}"))),
            "Scenario {n} has no vector"
        );
        assert!(
            covered
                .iter()
                .any(|c| c.starts_with(&format!("Edge case {n}"))),
            "Edge case {n} has no vector"
        );
    }
}

#[test]
fn infer_step_vectors_give_the_expected_step() {
    let spec = WorkflowSpec::builtin("research_stream").unwrap();
    for case in cases("infer_step.json") {
        let config: Config = serde_json::from_value(case["config"].clone()).unwrap();
        let skipped: Vec<String> = serde_json::from_value(case["skipped"].clone()).unwrap();
        let step = spec.infer_step(&config, &skipped, case["confirmed"].as_bool().unwrap());
        assert_eq!(step, case["expect"].as_str().unwrap(), "{}", case["name"]);
    }
}

#[test]
fn workflow_spec_vectors_load_or_fail_with_the_expected_error() {
    for case in cases("workflow_specs.json") {
        let name = case["name"].as_str().unwrap();
        let result = WorkflowSpec::from_json(&case["spec"].to_string());
        match (&result, case["error"].as_object()) {
            (Ok(_), None) => {}
            (Err(error), Some(expected)) => {
                assert_eq!(error.code(), expected["code"].as_str().unwrap(), "{name}");
                if let Some(message) = expected["message"].as_str() {
                    assert_eq!(error.to_string(), message, "{name}");
                }
            }
            _ => panic!("{name}: unexpected result {result:?}"),
        }
    }
}

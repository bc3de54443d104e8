//! Agent-loop vectors (`tests/vectors/agent.json`): every step of a turn, the rounds given back
//! to the model, and the finished answer.

mod common;

use common::vectors;
use serde_json::{Value, json};
use stepwise_core::agent::{Agent, AgentLimits, Step, ToolOutcome, finish};
use stepwise_core::llm::ToolCall;
use stepwise_core::markers::MarkerParser;
use stepwise_core::registry::Registry;

fn step_json(step: Option<Step>) -> Value {
    match step {
        None => Value::Null,
        Some(Step::Done) => json!("done"),
        Some(Step::CallModel { answer_now }) => json!({"call_model": {"answer_now": answer_now}}),
        Some(Step::RunTools(runs)) => {
            let runs: Vec<Value> = runs
                .iter()
                .map(|r| json!({"index": r.index, "tool": r.tool, "input": r.input}))
                .collect();
            json!({"run": runs})
        }
    }
}

fn outcome(value: &Value) -> ToolOutcome {
    if let Some(done) = value.get("done") {
        ToolOutcome::Done {
            text: done["text"].as_str().unwrap().into(),
            payload: done.get("payload").cloned(),
        }
    } else if let Some(message) = value.get("failed") {
        ToolOutcome::Failed(message.as_str().unwrap().into())
    } else {
        ToolOutcome::TimedOut
    }
}

#[test]
fn agent_turns_follow_their_vectors() {
    let file = vectors("agent.json");
    for case in file["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let registry =
            Registry::from_value(case.get("registry").unwrap_or(&file["registry"])).unwrap();
        let resolution = registry.resolve(case["page"].as_str().unwrap(), None, None);
        let limits = match case.get("limits") {
            Some(l) => AgentLimits {
                max_iterations: l["max_iterations"].as_u64().unwrap() as u32,
                max_tool_calls: l["max_tool_calls"].as_u64().unwrap() as u32,
            },
            None => AgentLimits::default(),
        };
        let mut agent = Agent::new(&resolution, limits);
        assert_eq!(
            step_json(Some(agent.start())),
            case["start"],
            "{name}: start"
        );
        let mut texts: Vec<String> = Vec::new();
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let got = if let Some(model) = step.get("model") {
                let text = model["text"].as_str().unwrap();
                texts.push(text.to_owned());
                let calls: Vec<ToolCall> = serde_json::from_value(model["calls"].clone()).unwrap();
                Some(agent.model_answered(text, calls))
            } else {
                let tool = &step["tool"];
                let index = tool["index"].as_u64().unwrap() as u32;
                agent.tool_finished(index, outcome(&tool["outcome"]))
            };
            assert_eq!(step_json(got), step["expect"], "{name}: step {i}");
        }
        if let Some(rounds) = case.get("rounds") {
            assert_eq!(
                serde_json::to_value(agent.rounds()).unwrap(),
                *rounds,
                "{name}: rounds"
            );
        }
        if let Some(calls) = case.get("model_calls") {
            assert_eq!(
                u64::from(agent.model_calls()),
                calls.as_u64().unwrap(),
                "{name}"
            );
        }
        let history = agent.tool_history();
        if let Some(outputs) = case.get("history_outputs") {
            let got: Vec<&str> = history.iter().map(|h| h.output.as_str()).collect();
            assert_eq!(json!(got), *outputs, "{name}: outputs");
            assert!(
                history
                    .iter()
                    .all(|h| h.is_error == h.output.starts_with("error:")),
                "{name}"
            );
        }
        if let Some(inputs) = case.get("history_inputs") {
            let got: Vec<&Value> = history.iter().map(|h| &h.input).collect();
            assert_eq!(json!(got), *inputs, "{name}: inputs");
        }
        let mut parser = MarkerParser::with_registry(resolution.marker_registry());
        for text in &texts {
            parser.feed(text);
            if !text.is_empty() && !text.ends_with('\n') {
                parser.feed("\n");
            }
        }
        parser.end();
        let answer = finish(&resolution, parser.finish(), agent);
        if let Some(expected) = case.get("answer") {
            assert_eq!(
                serde_json::to_value(&answer).unwrap(),
                *expected,
                "{name}: answer"
            );
        }
        if let Some(codes) = case.get("answer_codes") {
            let got: Vec<&str> = answer.diagnostics.iter().map(|d| d.code.as_str()).collect();
            assert_eq!(json!(got), *codes, "{name}: diagnostics");
        }
    }
}

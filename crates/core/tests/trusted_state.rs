//! What a guided turn trusts of a request (issue 31): a new conversation cannot claim to be
//! done, and a continuing turn builds on the state the server stored, not on the state the
//! client carried.

use serde_json::json;
use stepwise_core::conversation::GuidedState;
use stepwise_core::protocol::ChatRequest;
use stepwise_core::turn::{self, TurnStart, with_stored_state};
use stepwise_core::workflow::{DONE_STEP, WorkflowSpec};

fn complete_config() -> serde_json::Value {
    json!({
        "purpose": "Monitor competitors",
        "business_goals": ["Track launches"],
        "stream_type": "competitive",
        "focus_areas": ["Oncology"],
        "competitors": ["Acme"],
        "keywords": ["EGFR"]
    })
}

fn request(value: serde_json::Value) -> ChatRequest {
    serde_json::from_value(value).unwrap()
}

#[test]
fn a_new_conversation_claiming_done_is_at_its_review_and_must_confirm() {
    let spec = WorkflowSpec::builtin("research_stream").unwrap();
    let forged = request(json!({
        "message": "Anything", "current_step": DONE_STEP, "current_config": complete_config()
    }));
    let TurnStart::CallModel(plan) = turn::begin(&spec, &forged).unwrap() else {
        panic!("a text turn calls the model");
    };
    assert_eq!(plan.state.current_step, "review");
    // Only the confirm action, from that review, ends the workflow.
    let confirm = request(json!({
        "message": "", "current_step": DONE_STEP, "current_config": complete_config(),
        "user_action": {"type": "confirm"}
    }));
    let TurnStart::CallModel(plan) = turn::begin(&spec, &confirm).unwrap() else {
        panic!("a confirm calls the model");
    };
    assert_eq!(plan.state.current_step, DONE_STEP);
}

#[test]
fn a_continuing_turn_builds_on_the_stored_state_whatever_the_client_carried() {
    let spec = WorkflowSpec::builtin("research_stream").unwrap();
    let carried = request(json!({
        "message": "Track launches",
        "conversation_id": "0123456789abcdef0123456789abcdef", "turns": 1,
        "current_step": DONE_STEP, "current_config": complete_config(),
        "conversation_history": [{"role": "user", "content": "x".repeat(200_000)}]
    }));
    let stored = GuidedState {
        workflow: spec.id.clone(),
        current_step: "business_goals".into(),
        current_config: serde_json::from_value(json!({"purpose": "Monitor competitors"})).unwrap(),
        conversation_history: Vec::new(),
        skipped: Vec::new(),
    };
    let trusted = with_stored_state(&carried, &stored);
    let TurnStart::CallModel(plan) = turn::begin(&spec, &trusted).unwrap() else {
        panic!("a text turn calls the model");
    };
    assert_eq!(plan.state.current_step, "business_goals");
    assert_eq!(plan.state.config.len(), 1);
    assert_eq!(
        plan.messages.len(),
        1,
        "only the user's message: no carried history"
    );
    assert_eq!(plan.messages[0].content, "Track launches");
}

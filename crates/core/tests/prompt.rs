//! The model call a turn plans: the system prompt carries the step's guidance, the config so far,
//! what the user just did and the marker instructions; history is trimmed to its budget.

use stepwise_core::protocol::{ChatMessage, ChatRequest, Role};
use stepwise_core::turn::{self, Rejection, TurnOptions, TurnStart, trim_history};
use stepwise_core::workflow::{Config, FieldValue, UserAction, WorkflowSpec};

fn plan(request: &ChatRequest, options: TurnOptions) -> turn::TurnPlan {
    let spec = WorkflowSpec::builtin("research_stream").unwrap();
    match turn::begin_with(&spec, request, options) {
        Ok(TurnStart::CallModel(plan)) => plan,
        Ok(TurnStart::Respond(response)) | Err(Rejection { response, .. }) => {
            panic!("expected a model call, got {response:?}")
        }
    }
}

fn message(role: Role, content: &str) -> ChatMessage {
    ChatMessage::new(role, content)
}

#[test]
fn the_system_prompt_describes_the_step_the_config_the_action_and_the_markers() {
    let mut config = Config::new();
    config.insert("purpose".into(), FieldValue::Text("Track rivals".into()));
    config.insert(
        "business_goals".into(),
        FieldValue::List(vec!["Launches".into(), "Pricing".into()]),
    );
    let request = ChatRequest {
        message: "competitive".into(),
        current_step: Some("stream_type".into()),
        current_config: config,
        user_action: Some(UserAction::OptionSelected {
            target_field: "stream_type".into(),
            selected_value: "competitive".into(),
        }),
        ..ChatRequest::default()
    };
    let plan = plan(&request, TurnOptions::default());
    let prompt = &plan.system_prompt;
    assert_eq!(plan.step, "focus_areas");
    for expected in [
        "\"Create a research stream\"",
        "→ 4. focus_areas (required): Which therapeutic or focus areas should it cover?",
        "✓ 1. purpose (required)",
        "  5. competitors (optional)",
        "- purpose: \"Track rivals\"",
        "- business_goals: [\"Launches\", \"Pricing\"]",
        "- stream_type: \"competitive\"",
        "Current step: focus_areas — one or more choices, required",
        "Choices (others may be proposed): Oncology, Cardiology, Immunology, Neurology, Rare diseases",
        "Guidance: Offer focus areas as OPTIONS",
        "the user picked \"competitive\" for stream_type; it is saved",
        "OPTIONS: A|B|C",
        "PROPOSED_MESSAGE: text",
        "TARGET_FIELD: focus_areas",
        "EXTRACTED_DATA: field=value",
    ] {
        assert!(
            prompt.contains(expected),
            "missing {expected:?} in:\n{prompt}"
        );
    }
    assert!(
        !prompt.contains("SUGGESTIONS: a, b, c"),
        "a multi-choice step asks for OPTIONS, not SUGGESTIONS"
    );
}

#[test]
fn the_last_message_is_the_users_and_history_is_trimmed_oldest_first() {
    let history = vec![
        message(Role::User, &"a".repeat(30)),
        message(Role::Assistant, &"b".repeat(30)),
        message(Role::User, &"c".repeat(30)),
        message(Role::Assistant, &"d".repeat(30)),
    ];
    let request = ChatRequest {
        message: "hello".into(),
        conversation_history: history.clone(),
        ..ChatRequest::default()
    };
    let options = TurnOptions {
        history_budget: 65,
        ..TurnOptions::default()
    };
    let plan = plan(&request, options);
    let contents: Vec<&str> = plan.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        contents,
        [&"c".repeat(30) as &str, &"d".repeat(30), "hello"]
    );
    assert_eq!(plan.messages.last().unwrap().role, Role::User);
    assert_eq!(trim_history(&history, 0), []);
    assert_eq!(trim_history(&history, 1000), history);
}

#[test]
fn an_action_without_text_is_described_to_the_model() {
    let request = ChatRequest {
        message: "".into(),
        current_step: Some("competitors".into()),
        user_action: Some(UserAction::SkipStep {
            target_field: "competitors".into(),
        }),
        ..ChatRequest::default()
    };
    let plan = plan(&request, TurnOptions::default());
    assert_eq!(
        plan.messages.last().unwrap().content,
        "(skipped competitors)"
    );
    assert!(
        plan.system_prompt
            .contains("the user skipped the optional competitors")
    );
}

#[test]
fn a_message_over_the_limit_is_refused_alike_before_any_state_and_when_the_turn_begins() {
    let spec = WorkflowSpec::builtin("research_stream").unwrap();
    let options = TurnOptions {
        max_message_chars: 5,
        ..TurnOptions::default()
    };
    // Counted in characters, not bytes: five of them fit, whatever their width.
    let fits = ChatRequest {
        message: "ééééé".into(),
        current_step: Some("purpose".into()),
        ..ChatRequest::default()
    };
    assert_eq!(turn::message_within(&fits, options), Ok(()));
    assert!(turn::begin_with(&spec, &fits, options).is_ok());
    let over = ChatRequest {
        message: "ééééé!".into(),
        ..fits
    };
    let refused = turn::message_within(&over, options).unwrap_err();
    assert_eq!(refused.code(), "message_too_long");
    match turn::begin_with(&spec, &over, options) {
        Err(rejection) => assert_eq!(rejection.error, refused),
        Ok(start) => panic!("expected a rejection, got {start:?}"),
    }
}

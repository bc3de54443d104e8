//! Saved streams: saved only when confirmed, changed all or nothing through the workflow's
//! validated field edits, never left without a required field.

use serde_json::json;
use stepwise_core::streams::{SavedStream, StreamChange};
use stepwise_core::workflow::{Config, FieldValue, WorkflowSpec, WorkflowState};

fn confirmed() -> (WorkflowSpec, SavedStream) {
    let spec = WorkflowSpec::builtin("research_stream").unwrap();
    let config: Config = serde_json::from_value(json!({
        "purpose": "Track EGFR resistance research for our lung programme. More words here.",
        "business_goals": ["Pipeline decisions"],
        "stream_type": "scientific",
        "focus_areas": ["Oncology"],
        "keywords": ["EGFR", "osimertinib"],
    }))
    .unwrap();
    let state = WorkflowState {
        current_step: "done".into(),
        config,
        skipped: vec!["competitors".into()],
    };
    let stream = SavedStream::from_state(&spec, &state, "s1", "o1", Some("c1"), 5).unwrap();
    (spec, stream)
}

fn change(value: serde_json::Value) -> StreamChange {
    serde_json::from_value(value).unwrap()
}

#[test]
fn a_confirmed_configuration_becomes_a_stream_named_after_its_purpose() {
    let (_, stream) = confirmed();
    assert_eq!(
        stream.name,
        "Track EGFR resistance research for our lung programme"
    );
    assert_eq!((stream.created_at, stream.updated_at), (5, 5));
    assert_eq!(stream.conversation_id.as_deref(), Some("c1"));
    assert_eq!(
        SavedStream::query_for(&stream.config),
        "(EGFR OR osimertinib) AND (Oncology)"
    );
}

#[test]
fn valid_edits_apply_and_stamp_the_change() {
    let (spec, stream) = confirmed();
    let changed = stream
        .apply(
            &spec,
            &change(json!({"name": " Lung watch ", "chat_instructions": "Focus on trials.\nBe brief.",
                "edits": [{"field": "keywords", "value": ["EGFR", "C797S"]}, {"field": "competitors", "value": ["Acme"]}]})),
            9,
        )
        .unwrap();
    assert_eq!(changed.name, "Lung watch");
    assert_eq!(changed.chat_instructions, "Focus on trials.\nBe brief.");
    assert_eq!(
        changed.config.get("keywords"),
        Some(&FieldValue::List(vec!["EGFR".into(), "C797S".into()]))
    );
    assert_eq!(changed.updated_at, 9);
    assert!(!changed.skipped.contains(&"competitors".to_owned()));
}

#[test]
fn a_refused_edit_changes_nothing() {
    let (spec, stream) = confirmed();
    let refused = |value: serde_json::Value| stream.apply(&spec, &change(value), 9).unwrap_err();
    let error = refused(
        json!({"name": "New", "edits": [{"field": "keywords", "value": ["A"]}, {"field": "stream_type", "value": "astrology"}]}),
    );
    assert_eq!(error.code(), "invalid_value");
    assert_eq!(
        refused(json!({"edits": [{"field": "nope", "value": "x"}]})).code(),
        "unknown_field"
    );
    // The workflow itself refuses emptying a required field.
    let error = refused(json!({"edits": [{"field": "keywords", "value": []}]}));
    assert_eq!(error.code(), "selection_required");
    let error = refused(json!({"edits": [{"field": "purpose", "value": " "}]}));
    assert_eq!(error.code(), "invalid_value");
    assert_eq!(refused(json!({"name": "  "})).code(), "invalid_stream");
    assert_eq!(refused(json!({"name": "a\u{7}b"})).code(), "invalid_stream");
    assert_eq!(
        refused(json!({"chat_instructions": "x".repeat(4001)})).code(),
        "invalid_stream"
    );
    assert_eq!(
        refused(json!({"chat_instructions": "a\u{1b}[31m"})).code(),
        "invalid_stream"
    );
    assert!(serde_json::from_value::<StreamChange>(json!({"owner": "o2"})).is_err());
}

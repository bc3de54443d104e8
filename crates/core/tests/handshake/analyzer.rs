//! The analyzer, the request built with automatic supply, what is never asked for, and the
//! supplies carried from earlier turns.

use serde_json::json;
use stepwise_core::handshake::{
    ContextNeedsAnalyzer, MAX_CARRIED_PROMPT_CHARS, MessageClass, Origin, Policy, RequestStatus,
    Slot, Sources, Supplier, Urgency, build_request, carried, list, slice, wanted_from_marker,
};

use super::fixtures::*;

#[test]
fn artifacts_are_addressed_by_key_path_sliced_and_redacted() {
    let stream = stream();
    let jobs = [job()];
    let sources = sources_of(&stream, &jobs);
    let listed = list(&sources);
    assert!(listed.windows(2).all(|w| w[0].phase <= w[1].phase));
    let paths: Vec<&str> = listed.iter().map(|a| a.key_path.as_str()).collect();
    for path in [
        format!("stream/{STREAM}/config/purpose"),
        format!("research/{JOB}/llm_results/a/result"),
        format!("research/{JOB}/synthesis/points_of_interest"),
        format!("research/{JOB}/publication"),
    ] {
        assert!(paths.contains(&path.as_str()), "{path}");
    }
    let report = slice(
        &sources,
        &format!("research/{JOB}/llm_results/a/result"),
        100,
    )
    .unwrap();
    assert_eq!(report.phase, 2);
    assert!(report.text.contains("[redacted key]") && !report.text.contains("sk-"));
    let instructions = slice(&sources, &format!("stream/{STREAM}/chat_instructions"), 100).unwrap();
    assert!(instructions.text.contains("[redacted e-mail]"));
    let cut = slice(
        &sources,
        &format!("research/{JOB}/llm_results/*/result"),
        12,
    )
    .unwrap();
    assert_eq!((cut.end, cut.truncated()), (12, true));
    let other = slice(
        &sources,
        "research/ffffffffffffffffffffffffffffffff/prompt",
        100,
    );
    assert_eq!(other.unwrap_err().code(), "artifact_not_found");
}

#[test]
fn the_analyzer_asks_only_for_what_the_turn_does_not_hold() {
    let analyzer = ContextNeedsAnalyzer::new(Policy::builtin());
    let poi = format!("research/{JOB}/synthesis/points_of_interest");
    let summary = format!("research/{JOB}/synthesis/summary");
    let wanted = analyzer.analyze(&input(
        "What are the points of interest?",
        &[],
        Some(JOB),
        &[],
    ));
    assert_eq!(wanted.len(), 2);
    assert_eq!(wanted[0].key_path.as_deref(), Some(poi.as_str()));
    // The baseline already carries them: nothing to ask.
    let held = [poi, summary];
    assert!(
        analyzer
            .analyze(&input(
                "What are the points of interest?",
                &held,
                Some(JOB),
                &[]
            ))
            .is_empty()
    );
    // No job in view: a choice among candidates.
    let candidates = [(JOB.to_owned(), "EGFR review".to_owned())];
    let choice = analyzer.analyze(&input("Which findings matter?", &[], None, &candidates));
    assert!(choice[0].key_path.is_none());
    assert_eq!(
        choice[0].candidates,
        [format!("research/{JOB}/synthesis/points_of_interest")]
    );
    // No job at all: asking would only stall the turn.
    assert!(
        analyzer
            .analyze(&input("Which findings matter?", &[], None, &[]))
            .is_empty()
    );
    // Only the user has their notes.
    let notes = analyzer.analyze(&input("Compare this with my notes", &[], Some(JOB), &[]));
    assert_eq!(
        (
            notes[0].need.artifact_type.as_str(),
            notes[0].key_path.clone()
        ),
        ("note", None)
    );
    // A plan with no goal in view needs one; an unrelated question needs nothing.
    let mut plan = input("Plan the next steps", &[], None, &[]);
    assert_eq!(plan.class, MessageClass::Action);
    assert_eq!(analyzer.analyze(&plan).len(), 1);
    plan.goal = "Monitor EGFR.";
    assert!(analyzer.analyze(&plan).is_empty());
    assert!(
        analyzer
            .analyze(&input("Hello there", &[], Some(JOB), &[]))
            .is_empty()
    );
}

#[test]
fn the_system_fills_what_it_holds_and_offers_candidates_for_the_rest() {
    let stream = stream();
    let jobs = [job()];
    let sources = sources_of(&stream, &jobs);
    let analyzer = ContextNeedsAnalyzer::new(Policy::builtin());
    let auto = analyzer.analyze(&input("What did each model say?", &[], Some(JOB), &[]));
    let request = build_request("q1", "m1", Origin::Analyzer, auto, &sources, 50, SLA);
    assert_eq!(request.status, RequestStatus::Resolved);
    let supply = request.slots[0].supply.as_ref().unwrap();
    assert_eq!(supply.by, Supplier::System);
    assert!(supply.text.contains("### a") && supply.text.contains("### b"));

    let candidates = [(JOB.to_owned(), "EGFR review".to_owned())];
    let choice = analyzer.analyze(&input(
        "Compare the findings with my notes",
        &[],
        None,
        &candidates,
    ));
    let request = build_request("q2", "m2", Origin::Analyzer, choice, &sources, 50, SLA);
    assert_eq!(request.status, RequestStatus::Open);
    let open: Vec<&Slot> = request.slots.iter().filter(|s| !s.met()).collect();
    assert_eq!(open.len(), 2);
    assert_eq!(
        open[0].suggestions[0].key_path,
        format!("research/{JOB}/synthesis/points_of_interest")
    );
    assert!(open[0].suggestions[0].excerpt.contains("Dose escalation"));
}

#[test]
fn what_cannot_exist_or_is_on_screen_is_never_asked_for() {
    let analyzer = ContextNeedsAnalyzer::new(Policy::builtin());
    // A job in view with no synthesis yet (a draft, a running or single-provider job).
    let mut unsynthesized = job();
    unsynthesized.synthesized_result = None;
    unsynthesized.points_of_interest.clear();
    let jobs = [unsynthesized];
    let stream = stream();
    let sources = sources_of(&stream, &jobs);
    let findings = analyzer.analyze(&input("Which findings matter?", &[], Some(JOB), &[]));
    assert_eq!(findings.len(), 2, "the analyzer wants the synthesis");
    let request = build_request("q1", "m1", Origin::Analyzer, findings, &sources, 50, SLA);
    assert!(request.slots.is_empty(), "{:?}", request.slots);
    assert_eq!(request.status, RequestStatus::Resolved);
    // A stream never searched: its literature does not exist either.
    let literature = analyzer.analyze(&input("What do the search results show?", &[], None, &[]));
    assert_eq!(literature.len(), 1);
    let request = build_request("q2", "m2", Origin::Analyzer, literature, &sources, 50, SLA);
    assert!(request.slots.is_empty());
    // Search results on screen are in the prompt: the analyzer wants nothing.
    let context = json!({"current_page": "streams", "stream_id": STREAM,
        "item_summaries": [{"pmid": "31", "title": "EGFR and resistance"}]});
    let screen = stepwise_core::registry::ChatContext::from_value(context).unwrap();
    let mut on_screen = input("What do the search results show?", &[], None, &[]);
    on_screen.screen = Some(&screen);
    assert!(analyzer.analyze(&on_screen).is_empty());
    let empty = json!({"current_page": "streams", "stream_id": STREAM, "item_summaries": []});
    let screen = stepwise_core::registry::ChatContext::from_value(empty).unwrap();
    on_screen.screen = Some(&screen);
    assert_eq!(
        analyzer.analyze(&on_screen).len(),
        1,
        "an empty list shows nothing"
    );
    // What the user alone holds is still asked for.
    let notes = analyzer.analyze(&input("Compare this with my notes", &[], Some(JOB), &[]));
    let request = build_request("q3", "m3", Origin::Analyzer, notes, &sources, 50, SLA);
    assert_eq!(request.status, RequestStatus::Open);
}

#[test]
fn what_the_user_supplied_before_is_carried_and_not_asked_again() {
    let analyzer = ContextNeedsAnalyzer::new(Policy::builtin());
    let asked = analyzer.analyze(&input("Compare this with my notes", &[], Some(JOB), &[]));
    let mut first = build_request(
        "q1",
        "m1",
        Origin::Analyzer,
        asked,
        &Sources::default(),
        50,
        SLA,
    );
    assert_eq!(first.status, RequestStatus::Open);
    first
        .supply("s1", supply("My note: dosing matters most."))
        .unwrap();
    first.close(RequestStatus::Resolved, 60);
    let earlier = carried(std::slice::from_ref(&first), None);
    assert!(
        earlier.text.contains("For the user message m1:"),
        "{}",
        earlier.text
    );
    assert!(earlier.text.contains("My note: dosing matters most."));
    assert_eq!(earlier.held.len(), 1);
    let again = analyzer.analyze(&input(
        "And against my notes?",
        &earlier.held,
        Some(JOB),
        &[],
    ));
    assert!(again.is_empty(), "{again:?}");
    // A resumed turn renders its own request: it is not carried twice.
    assert_eq!(
        carried(std::slice::from_ref(&first), Some("q1")),
        Default::default()
    );
    // What the system supplied is not carried (it is supplied again when needed).
    let stream = stream();
    let jobs = [job()];
    let sources = sources_of(&stream, &jobs);
    let auto = analyzer.analyze(&input("What did each model say?", &[], Some(JOB), &[]));
    let automatic = build_request("q2", "m2", Origin::Analyzer, auto, &sources, 50, SLA);
    assert_eq!(carried(&[automatic], None), Default::default());
    // Too much to carry: the newest requests first, an older one left out and not held.
    let big = |id: &str, text: &str| {
        let asked = analyzer.analyze(&input("Compare this with my notes", &[], Some(JOB), &[]));
        let mut request = build_request(
            id,
            id,
            Origin::Analyzer,
            asked,
            &Sources::default(),
            50,
            SLA,
        );
        request.slots[0].size_limit = 8_000;
        request.supply("s1", supply(text)).unwrap();
        request
    };
    let old = big("old", &"o".repeat(7_000));
    let new = big("new", &"n".repeat(7_000));
    let both = carried(&[old, new], None);
    assert!(
        both.text.contains("For the user message new:")
            && !both.text.contains("For the user message old:")
    );
    assert_eq!(both.held.len(), 1);
    assert!(both.text.chars().count() <= MAX_CARRIED_PROMPT_CHARS);
}

#[test]
fn the_model_s_own_request_is_read_and_checked() {
    let data = json!({"slots": [{"phase": 2, "artifact_type": "llm_result",
        "key_path": format!("research/{JOB}/llm_results/b/result"), "description": "B's report"},
        {"phase": 0, "artifact_type": "note", "urgency": "optional", "description": "anything else"}]});
    let wanted = wanted_from_marker(&data.to_string()).unwrap();
    assert_eq!(wanted.len(), 2);
    assert_eq!(wanted[1].need.urgency, Urgency::Optional);
    for bad in [
        json!({"slots": []}),
        json!({"slots": [{"phase": 2, "artifact_type": "x",
        "key_path": "../../etc/passwd", "description": "d"}]}),
        json!({"nope": 1}),
    ] {
        assert!(wanted_from_marker(&bad.to_string()).is_err(), "{bad}");
    }
}

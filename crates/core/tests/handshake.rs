//! Context on request (context-handshake.md): artifacts by key path, the needs analyzer, the
//! baseline's order and prompt sheets, the request built with automatic supply, and the
//! request's life on a conversation (deferral, partial supply, quota met, reminder, fallback,
//! force), with a property over supplies and skips.

use proptest::prelude::*;
use serde_json::json;
use stepwise_core::conversation::{
    Command, Conversation, ConversationError, ConversationEvent, Entry, Reply, SlotSupply, Waiting,
    handle,
};
use stepwise_core::handshake::{
    Baseline, ContextNeedsAnalyzer, ContextRequest, MAX_CARRIED_PROMPT_CHARS, MessageClass, Need,
    NeedsInput, Origin, Outcome, Policy, PromptSheet, RequestStatus, Slot, SlotState, Sources,
    Supplier, Supply, Urgency, Wanted, build_request, carried, classify, list, slice,
    wanted_from_marker,
};
use stepwise_core::research::{DraftFields, LlmResult, LlmStatus, Research, ResearchStatus};
use stepwise_core::streams::SavedStream;
use stepwise_core::workflow::FieldValue;

const JOB: &str = "0123456789abcdef0123456789abcdef";
const STREAM: &str = "fedcba9876543210fedcba9876543210";
const SLA: u64 = 10_000;

fn stream() -> SavedStream {
    let mut config = stepwise_core::workflow::Config::new();
    config.insert(
        "purpose".into(),
        FieldValue::Text("Monitor EGFR inhibitor trials.".into()),
    );
    config.insert(
        "business_goals".into(),
        FieldValue::List(vec!["Spot new entrants".into(), "Track pricing".into()]),
    );
    config.insert("stream_type".into(), FieldValue::Text("competitive".into()));
    SavedStream {
        id: STREAM.into(),
        owner: "o1".into(),
        name: "EGFR watch".into(),
        workflow: "research_stream".into(),
        config,
        skipped: Vec::new(),
        chat_instructions: "Contact lead@example.com for access.".into(),
        created_at: 0,
        updated_at: 0,
        conversation_id: None,
    }
}

fn job() -> Research {
    let fields = DraftFields {
        title: "EGFR review".into(),
        prompt: "Compare EGFR inhibitors".into(),
        selected_llms: vec!["a".into(), "b".into()],
        synthesis_llm: "a".into(),
        external_reports: Vec::new(),
        stream_id: Some(STREAM.into()),
    };
    let mut job = Research::draft(JOB.into(), "o1".into(), fields, 0).unwrap();
    job.status = ResearchStatus::Completed;
    for (provider, text) in [
        ("a", "Report A with key sk-abcdefghijklmnopqrstuv."),
        ("b", "Report B"),
    ] {
        job.llm_results.push(LlmResult {
            provider: provider.into(),
            status: LlmStatus::Completed,
            attempt: 1,
            dispatched_at: 0,
            result: Some(text.into()),
            error: None,
            finished_at: Some(1),
        });
    }
    job.synthesized_result = Some("Both agree on dosing.".into());
    job.points_of_interest = vec!["Dose escalation".into(), "Pricing".into()];
    job
}

fn input<'a>(
    message: &'a str,
    held: &'a [String],
    research: Option<&'a str>,
    candidates: &'a [(String, String)],
) -> NeedsInput<'a> {
    NeedsInput {
        page: "research",
        message,
        class: classify(message),
        active_phase: 3,
        goal: "",
        stream_id: Some(STREAM),
        research_id: research,
        candidates,
        held,
        screen: None,
    }
}

#[test]
fn artifacts_are_addressed_by_key_path_sliced_and_redacted() {
    let stream = stream();
    let jobs = [job()];
    let sources = Sources {
        stream: Some(&stream),
        literature: None,
        jobs: &jobs,
    };
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
    let sources = Sources {
        stream: Some(&stream),
        literature: None,
        jobs: &jobs,
    };
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
    let sources = Sources {
        stream: Some(&stream),
        literature: None,
        jobs: &jobs,
    };
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
    let sources = Sources {
        stream: Some(&stream),
        literature: None,
        jobs: &jobs,
    };
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

#[test]
fn the_baseline_renders_in_the_spec_s_order_and_a_sheet_can_reorder_it() {
    let stream = stream();
    let job = job();
    let baseline = Baseline {
        stream: Some(&stream),
        literature: None,
        job: Some(&job),
        writing_style: Some("executive"),
        earlier: "",
    };
    assert_eq!(
        baseline.synthesized_goal(),
        "Monitor EGFR inhibitor trials, in service of: Spot new entrants, Track pricing."
    );
    let text = baseline.render(&PromptSheet::builtin(), "research", "question", None, None);
    let order: Vec<usize> = [
        "## Writing style",
        "## Your role",
        "## What is loaded",
        "## The user's guidance",
        "## Current goal",
        "## Phase 3 outputs",
    ]
    .iter()
    .map(|h| text.find(h).unwrap_or_else(|| panic!("{h} in {text}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text.contains("the conclusion first") && text.contains("- Dose escalation"));
    assert!(!text.contains("## Supplied Context Attachments"));

    let sheet = PromptSheet::parse(
        "[text system_role_description]\nAnalyst.\n[text research_role_rationale]\nBecause.\n[style default]\nPlain.\n\
         [section attachments]\n## Given\n{attachments}\n[section goal]\nGOAL: {synthesized_goal}\n",
    )
    .unwrap();
    let mut request = request_with(&[Urgency::Required]);
    request.supply("s1", supply("my pasted note")).unwrap();
    let text = baseline.render(&sheet, "research", "question", Some(&request), None);
    assert!(text.starts_with("## Given\nFor the user message m1:\n### [Phase 0] slot s1 (typed by the user, supplied by the user)\nmy pasted note"), "{text}");
    assert!(text.ends_with(
        "GOAL: Monitor EGFR inhibitor trials, in service of: Spot new entrants, Track pricing."
    ));
    // Carried supplies of earlier turns follow the turn's own.
    let carried_text = "For the user message m0:\n### [Phase 0] notes (typed by the user, supplied by the user)\nold note";
    let with_earlier = Baseline {
        earlier: carried_text,
        ..baseline
    };
    let text = with_earlier.render(&sheet, "research", "question", Some(&request), None);
    assert!(
        text.contains("my pasted note\nFor the user message m0:"),
        "{text}"
    );
}

#[test]
fn what_the_owner_wrote_reaches_the_prompt_redacted_and_within_limits() {
    let stream = stream();
    let mut job = job();
    let key = "sk-abcdefghijklmnopqrstuvwx";
    job.synthesized_result = Some(format!(
        "Ask ann@example.org. Key {key}. {}",
        "s".repeat(50_000)
    ));
    job.points_of_interest = vec![format!("Mail {key}"); 2_000];
    let baseline = Baseline {
        stream: Some(&stream),
        literature: None,
        job: Some(&job),
        writing_style: None,
        earlier: "",
    };
    let mut request = request_with(&[Urgency::Required]);
    request
        .supply("s1", supply("typed with bob@lab.io"))
        .unwrap();
    let text = baseline.render(
        &PromptSheet::builtin(),
        "research",
        "question",
        Some(&request),
        None,
    );
    for secret in ["lead@example.com", "ann@example.org", key, "bob@lab.io"] {
        assert!(!text.contains(secret), "{secret} in the prompt");
    }
    assert!(text.contains("Contact [redacted e-mail] for access."));
    assert!(text.len() < 16_000, "{} bytes", text.len());
    assert_eq!(
        text.matches("[… cut]").count(),
        2,
        "the summary and the points, cut"
    );
}

fn request_with(urgencies: &[Urgency]) -> ContextRequest {
    let wanted = urgencies
        .iter()
        .enumerate()
        .map(|(i, urgency)| Wanted {
            need: Need {
                phase: 0,
                artifact_type: "note".into(),
                key_path: None,
                size_limit: 100,
                urgency: *urgency,
                description: format!("slot s{}", i + 1),
            },
            key_path: None,
            candidates: Vec::new(),
        })
        .collect();
    build_request(
        "q1",
        "m1",
        Origin::Analyzer,
        wanted,
        &Sources::default(),
        1_000,
        SLA,
    )
}

fn supply(text: &str) -> Supply {
    Supply {
        by: Supplier::User,
        at: 2_000,
        key_path: None,
        text: text.into(),
        truncated: false,
    }
}

#[test]
fn a_request_met_by_skipping_counts_as_skipped_not_automatic() {
    let mut open = request_with(&[Urgency::Required, Urgency::Optional]);
    assert_eq!(open.outcome(), None);
    let mut skipped = open.clone();
    skipped.skip("s1").unwrap();
    skipped.close(RequestStatus::Resolved, 3_000);
    assert_eq!(skipped.outcome(), Some(Outcome::Skipped));
    open.supply("s1", supply("a note")).unwrap();
    open.skip("s2").unwrap();
    open.close(RequestStatus::Resolved, 3_000);
    assert_eq!(open.outcome(), Some(Outcome::User));
    let automatic = request_with(&[]);
    assert_eq!(automatic.outcome(), Some(Outcome::Auto));
    let mut forced = request_with(&[Urgency::Required]);
    forced.close(RequestStatus::Forced, 3_000);
    let mut fell_back = request_with(&[Urgency::Required]);
    fell_back.close(RequestStatus::FellBack, 3_000);
    let names: Vec<_> = [skipped, open, automatic, forced, fell_back]
        .iter()
        .map(|r| r.outcome().unwrap().as_str())
        .collect();
    assert_eq!(names, ["skipped", "user", "auto", "forced", "fallback"]);
}

/// A conversation whose first turn was deferred on a request of two required slots.
fn deferred() -> Conversation {
    let begin = Command::BeginAssistant {
        message: "Compare with my notes".into(),
        start: true,
        lease_ms: 60_000,
    };
    let handled = handle(None, "c1", "o1", &begin, 1_000).unwrap();
    let Reply::Begun { lease, .. } = handled.reply else {
        panic!()
    };
    let mut entry = Entry::user("Compare with my notes", 1_000, Some("research"));
    entry.id = Some("m1".into());
    let defer = Command::Defer {
        lease,
        entry: Box::new(entry),
        request: Box::new(request_with(&[Urgency::Required, Urgency::Required])),
        waiting: Box::new(Waiting {
            request_id: "q1".into(),
            message: "Compare with my notes".into(),
            context: json!({"current_page": "research"}),
            provider: None,
        }),
    };
    let handled = handle(handled.record.as_ref(), "c1", "o1", &defer, 1_100).unwrap();
    assert!(matches!(
        handled.events[0],
        ConversationEvent::Message { .. }
    ));
    assert!(matches!(
        handled.events[1],
        ConversationEvent::ContextRequest { .. }
    ));
    handled.record.unwrap()
}

fn resume(
    record: &Conversation,
    now: u64,
) -> Result<stepwise_core::conversation::Handled, ConversationError> {
    handle(
        Some(record),
        "c1",
        "o1",
        &Command::BeginResume {
            request_id: "q1".into(),
            lease_ms: 60_000,
        },
        now,
    )
}

#[test]
fn a_partial_supply_waits_and_the_quota_met_resumes_the_turn() {
    let record = deferred();
    assert_eq!(record.next_wake(1_000_000), 1_000 + SLA / 2);
    let next = Command::BeginAssistant {
        message: "More".into(),
        start: false,
        lease_ms: 60_000,
    };
    assert_eq!(
        handle(Some(&record), "c1", "o1", &next, 1_200).unwrap_err(),
        ConversationError::ContextPending
    );
    assert_eq!(
        handle(Some(&record), "c1", "o2", &Command::Tick, 1_200).unwrap_err(),
        ConversationError::NotFound
    );
    let first = Command::Supply {
        request_id: "q1".into(),
        supplies: vec![SlotSupply {
            slot: "s1".into(),
            supply: supply("note one"),
        }],
        skips: vec![],
    };
    let handled = handle(Some(&record), "c1", "o1", &first, 1_300).unwrap();
    assert!(matches!(
        handled.events[0],
        ConversationEvent::ContextUpdate { .. }
    ));
    let record = handled.record.unwrap();
    assert_eq!(
        resume(&record, 1_400).unwrap_err(),
        ConversationError::ContextMissing
    );
    // A refused supply changes nothing.
    let too_long = Command::Supply {
        request_id: "q1".into(),
        supplies: vec![SlotSupply {
            slot: "s2".into(),
            supply: supply(&"x".repeat(101)),
        }],
        skips: vec![],
    };
    assert_eq!(
        handle(Some(&record), "c1", "o1", &too_long, 1_400)
            .unwrap_err()
            .code(),
        "invalid_supply"
    );
    let second = Command::Supply {
        request_id: "q1".into(),
        supplies: vec![SlotSupply {
            slot: "s2".into(),
            supply: supply("note two"),
        }],
        skips: vec![],
    };
    let record = handle(Some(&record), "c1", "o1", &second, 1_500)
        .unwrap()
        .record
        .unwrap();
    let handled = resume(&record, 1_600).unwrap();
    let Reply::Resumed {
        lease,
        request,
        waiting,
        conversation,
    } = handled.reply
    else {
        panic!()
    };
    assert_eq!(
        (request.status, waiting.message.as_str()),
        (RequestStatus::Resolved, "Compare with my notes")
    );
    assert!(stepwise_core::conversation::model_history(&conversation.entries, 1000).is_empty());
    let record = handled.record.unwrap();
    let mut answer = Entry::user("Here is the comparison", 1_700, None);
    answer.role = stepwise_core::protocol::Role::Assistant;
    let commit = Command::CommitAssistant {
        lease,
        entries: vec![answer],
        resumed: Some("q1".into()),
        requests: vec![],
        writing_style: None,
    };
    let record = handle(Some(&record), "c1", "o1", &commit, 1_700)
        .unwrap()
        .record
        .unwrap();
    assert_eq!(record.turns, 1);
    assert!(record.waiting.is_none());
    assert_eq!(record.entries.len(), 2);
    assert_eq!(
        record.entries[0].status,
        Some(stepwise_core::conversation::EntryStatus::Answered)
    );
    assert_eq!(record.requests[0].slots[1].state, SlotState::Supplied);
}

#[test]
fn the_alarm_reminds_at_half_the_sla_then_falls_back() {
    let record = deferred();
    let early = handle(Some(&record), "c1", "o1", &Command::Tick, 2_000).unwrap();
    assert!(early.record.is_none() && early.events.is_empty());
    let half = handle(Some(&record), "c1", "o1", &Command::Tick, 1_000 + SLA / 2).unwrap();
    assert!(matches!(
        half.events[0],
        ConversationEvent::ContextReminder {
            deadline: 11_000,
            ..
        }
    ));
    let record = half.record.unwrap();
    assert_eq!(record.next_wake(1_000_000), 1_000 + SLA);
    let again = handle(Some(&record), "c1", "o1", &Command::Tick, 7_000).unwrap();
    assert!(again.events.is_empty(), "one reminder only");
    let due = handle(Some(&record), "c1", "o1", &Command::Tick, 1_000 + SLA).unwrap();
    assert_eq!(
        due.reply,
        Reply::Ticked {
            fallback: Some("q1".into())
        }
    );
    let record = due.record.unwrap();
    assert_eq!(record.requests[0].status, RequestStatus::FellBack);
    let handled = resume(&record, 12_000).unwrap();
    let Reply::Resumed { request, .. } = handled.reply else {
        panic!()
    };
    assert_eq!(request.status, RequestStatus::FellBack);
    // A supply after the fallback is refused.
    let late = Command::Supply {
        request_id: "q1".into(),
        supplies: vec![SlotSupply {
            slot: "s1".into(),
            supply: supply("late"),
        }],
        skips: vec![],
    };
    assert_eq!(
        handle(Some(&record), "c1", "o1", &late, 12_000)
            .unwrap_err()
            .code(),
        "request_closed"
    );
}

#[test]
fn force_runs_the_turn_at_once_and_can_be_tried_again() {
    let record = deferred();
    let force = Command::Force {
        request_id: "q1".into(),
    };
    let handled = handle(Some(&record), "c1", "o1", &force, 3_000).unwrap();
    assert!(matches!(
        handled.events[0],
        ConversationEvent::ContextResolved { .. }
    ));
    let record = handled.record.unwrap();
    assert_eq!(record.requests[0].status, RequestStatus::Forced);
    let resumed = resume(&record, 3_100).unwrap();
    let Reply::Resumed { lease, .. } = resumed.reply else {
        panic!()
    };
    // The resumed turn fails: its message keeps waiting, and force works again.
    let record = handle(
        resumed.record.as_ref(),
        "c1",
        "o1",
        &Command::Abort { lease },
        3_200,
    )
    .unwrap()
    .record
    .unwrap();
    assert!(record.waiting.is_some());
    let again = handle(Some(&record), "c1", "o1", &force, 3_300).unwrap();
    assert!(again.events.is_empty());
    assert!(resume(again.record.as_ref().unwrap(), 3_400).is_ok());
    let unknown = Command::Force {
        request_id: "nope".into(),
    };
    assert_eq!(
        handle(Some(&record), "c1", "o1", &unknown, 3_300)
            .unwrap_err()
            .code(),
        "context_request_not_found"
    );
}

#[test]
fn a_supplied_request_whose_resumed_turn_fails_waits_again_with_its_fallback() {
    let mut record = deferred();
    for slot in ["s1", "s2"] {
        let supply = Command::Supply {
            request_id: "q1".into(),
            supplies: vec![SlotSupply {
                slot: slot.into(),
                supply: supply("My note."),
            }],
            skips: Vec::new(),
        };
        record = handle(Some(&record), "c1", "o1", &supply, 2_000)
            .unwrap()
            .record
            .unwrap();
    }
    let resumed = resume(&record, 2_100).unwrap();
    let running = resumed.record.clone().unwrap();
    assert_eq!(running.requests[0].status, RequestStatus::Resolved);
    let Reply::Resumed { lease, .. } = resumed.reply else {
        panic!()
    };
    // The model call fails: the request is open again, the message still waits.
    let failed = handle(Some(&running), "c1", "o1", &Command::Abort { lease }, 2_200)
        .unwrap()
        .record
        .unwrap();
    assert_eq!(failed.requests[0].status, RequestStatus::Open);
    assert_eq!(failed.requests[0].resolved_at, None);
    assert!(failed.waiting.is_some());
    // The same supply can be sent again, and the deadline's fallback still applies.
    let again = Command::Supply {
        request_id: "q1".into(),
        supplies: vec![SlotSupply {
            slot: "s1".into(),
            supply: supply("My note, again."),
        }],
        skips: Vec::new(),
    };
    assert!(handle(Some(&failed), "c1", "o1", &again, 2_300).is_ok());
    let tick = handle(Some(&failed), "c1", "o1", &Command::Tick, 1_000 + SLA).unwrap();
    assert_eq!(
        tick.reply,
        Reply::Ticked {
            fallback: Some("q1".into())
        }
    );
    // A resumed turn whose host died with nothing answered is given up the same way.
    let lost = Command::Interrupt {
        lease,
        entries: Vec::new(),
    };
    let settled = handle(Some(&running), "c1", "o1", &lost, 2_200)
        .unwrap()
        .record
        .unwrap();
    assert_eq!(settled.requests[0].status, RequestStatus::Open);
}

proptest! {
    /// However supplies and skips arrive, the request is ready exactly when no required slot is
    /// open, and optional slots never hold it.
    #[test]
    fn ready_means_no_required_slot_is_open(
        required in proptest::collection::vec(any::<bool>(), 1..6),
        steps in proptest::collection::vec((0usize..6, any::<bool>()), 0..12),
    ) {
        let urgencies: Vec<Urgency> = required.iter().map(|r| if *r { Urgency::Required } else { Urgency::Optional }).collect();
        let mut request = request_with(&urgencies);
        for (index, skip) in steps {
            let slot = format!("s{}", index + 1);
            let _ = if skip { request.skip(&slot) } else { request.supply(&slot, supply("text")) };
        }
        let open_required = request.slots.iter().any(|s| s.urgency == Urgency::Required && s.state == SlotState::Open);
        prop_assert_eq!(request.ready(), !open_required);
    }
}

//! The help desk's router before any search (tests/vectors/help_routing.json): a request for a
//! person, in every language the desk detects, hands the session over exactly as the "Talk to a
//! person" button does, from a fresh session or inside a clarification loop; questions that only
//! mention people are searched; only a yes accepts the offer of a person.

mod common;

use serde::Deserialize;
use stepwise_core::help::pipeline::{HANDOFF_FOOTER, HANDOFF_REPLY, QuestionView};
use stepwise_core::help::session::{EscalationReason, HelpMessage, Speaker, TurnRecord};
use stepwise_core::help::text::{self, is_yes, request_languages, wants_person};
use stepwise_core::help::{
    Caller, DialogState, Effect, HelpCommand, HelpSession, HelpState, Node, Outcome, Pipeline,
    SessionStatus, Step, handle,
};
use stepwise_core::interrupt::Resolution;

#[derive(Deserialize)]
struct Vectors {
    requests: Vec<Case>,
    questions: Vec<Case>,
    yes: Vec<String>,
    not_yes: Vec<String>,
}

#[derive(Deserialize)]
struct Case {
    language: String,
    message: String,
}

fn vectors() -> Vectors {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/help_routing.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The turn of `message` on `state` when it needs nothing from the world.
fn settled(state: &HelpState, message: &str) -> Option<Outcome> {
    match Pipeline::start(state, message).unwrap().1 {
        Step::Done(outcome) => Some(*outcome),
        Step::Effect(_) => None,
    }
}

/// A session asking its second question (the first answered "Pixel"), its language not yet known.
fn looping() -> HelpState {
    HelpState {
        user_language: None,
        ..common::help::looping(
            &["Which device?", "Version?"],
            1,
            &[("Which device?", "Pixel")],
        )
    }
}

#[test]
fn every_language_the_desk_detects_has_requests_for_a_person() {
    let vectors = vectors();
    for code in text::languages() {
        assert!(
            request_languages().any(|c| c == code),
            "no phrases for `{code}`"
        );
        let cases = vectors.requests.iter().filter(|c| c.language == code);
        assert!(cases.count() >= 2, "fewer than two requests in `{code}`");
    }
}

#[test]
fn a_request_for_a_person_hands_over_at_once_without_searching() {
    for case in vectors().requests {
        assert!(wants_person(&case.message), "{}", case.message);
        let outcome = settled(&HelpState::default(), &case.message)
            .unwrap_or_else(|| panic!("`{}` needed the world", case.message));
        assert_eq!(
            outcome.trace,
            [Node::Guardrails, Node::Router, Node::Handoff],
            "{}",
            case.message
        );
        assert_eq!(outcome.escalate, Some(EscalationReason::Requested));
        assert_eq!(outcome.reply, HANDOFF_REPLY);
        assert_eq!(outcome.footer.as_deref(), Some(HANDOFF_FOOTER));
        assert_eq!(outcome.dialog_state, DialogState::Escalated);
        assert!(!outcome.searched && outcome.cache.is_none());
        assert_eq!(
            outcome.state.original_query.as_deref(),
            Some(case.message.as_str())
        );
    }
}

#[test]
fn questions_that_mention_people_are_searched_as_questions() {
    for case in vectors().questions {
        assert!(!wants_person(&case.message), "{}", case.message);
        let (_, step) = Pipeline::start(&HelpState::default(), &case.message).unwrap();
        assert!(
            matches!(step, Step::Effect(Effect::LookupCache { .. })),
            "{}",
            case.message
        );
    }
}

#[test]
fn a_request_for_a_person_inside_a_loop_stops_the_loop_and_keeps_its_answers() {
    let outcome = settled(&looping(), "Can I talk to a real person instead?").unwrap();
    assert_eq!(
        outcome.trace,
        [Node::Guardrails, Node::Router, Node::Handoff]
    );
    assert_eq!(outcome.escalate, Some(EscalationReason::Requested));
    let context = outcome.state.clarification_context.unwrap();
    assert!(!context.active, "the next message is a question again");
    assert_eq!(
        context.answers.0,
        [("Which device?".into(), "Pixel".into())],
        "the request is not stored as an answer"
    );
    assert_eq!(
        outcome.state.original_query.as_deref(),
        Some("The app crashes")
    );
}

#[test]
fn only_a_yes_accepts_the_offer_of_a_person() {
    let vectors = vectors();
    let offered = HelpState {
        pending_handoff: true,
        ..HelpState::default()
    };
    for yes in &vectors.yes {
        assert!(is_yes(yes), "{yes}");
        let outcome = settled(&offered, yes).unwrap_or_else(|| panic!("`{yes}` was searched"));
        assert_eq!(outcome.escalate, Some(EscalationReason::Article), "{yes}");
        // Without an offer, a yes is not a request for a person.
        assert!(settled(&HelpState::default(), yes).is_none(), "{yes}");
    }
    for other in &vectors.not_yes {
        assert!(!is_yes(other), "{other}");
        let (_, step) = Pipeline::start(&offered, other).unwrap();
        assert!(
            matches!(step, Step::Effect(Effect::LookupCache { .. })),
            "{other}"
        );
    }
}

fn session_with_a_question() -> HelpSession {
    let owner = Caller::Owner("o1".into());
    let begin = HelpCommand::Begin {
        lease_id: "t1".into(),
        lease_ms: 1000,
        create: true,
    };
    let session = handle(None, "s1", &owner, &begin, 10)
        .unwrap()
        .record
        .unwrap();
    let mut record = TurnRecord::new(
        "The app crashes",
        &Outcome {
            reply: "Version?".into(),
            footer: None,
            state: looping(),
            dialog_state: DialogState::NeedsClarification,
            question: Some(QuestionView {
                number: 2,
                total: 2,
                text: "Version?".into(),
            }),
            source: None,
            trace: vec![Node::Guardrails, Node::Router, Node::Clarification],
            searched: true,
            cache: None,
            escalate: None,
            offer_handoff: false,
            no_answer: false,
        },
    );
    record.state = looping();
    let commit = HelpCommand::Commit {
        lease_id: "t1".into(),
        turn: Box::new(record),
    };
    handle(Some(&session), "s1", &owner, &commit, 11)
        .unwrap()
        .record
        .unwrap()
}

#[test]
fn a_typed_request_and_the_button_leave_the_same_session() {
    let owner = Caller::Owner("o1".into());
    let session = session_with_a_question();

    // Typed: a turn whose outcome the router settled.
    let begin = HelpCommand::Begin {
        lease_id: "t2".into(),
        lease_ms: 1000,
        create: false,
    };
    let held = handle(Some(&session), "s1", &owner, &begin, 20)
        .unwrap()
        .record
        .unwrap();
    let outcome = settled(&held.state, "I want to talk to a person").unwrap();
    let commit = HelpCommand::Commit {
        lease_id: "t2".into(),
        turn: Box::new(TurnRecord::new("I want to talk to a person", &outcome)),
    };
    let handled = handle(Some(&held), "s1", &owner, &commit, 21).unwrap();
    assert!(handled.reply.escalated);
    let typed = handled.record.unwrap();

    // The button.
    let handled = handle(
        Some(&session),
        "s1",
        &owner,
        &HelpCommand::RequestHandoff,
        21,
    )
    .unwrap();
    assert!(handled.reply.escalated);
    let button = handled.record.unwrap();

    for after in [&typed, &button] {
        assert_eq!(after.status, SessionStatus::Escalated);
        assert_eq!(
            after.escalation.as_ref().unwrap().reason,
            EscalationReason::Requested
        );
        assert!(after.state.handed_over);
        assert!(!after.state.clarifying());
        assert_eq!(after.state.dialog_state, Some(DialogState::Escalated));
    }
    assert_eq!(typed.state, button.state);
    assert_eq!(typed.escalation, button.escalation);
    // The question the desk was waiting on is skipped, the same either way.
    assert_eq!(typed.question, button.question);
    let waited = button.view().interrupt.unwrap();
    assert_eq!(waited.resolution, Some(Resolution::Skipped));
    assert_eq!(
        waited.reason.as_deref(),
        Some("the user asked for a person")
    );
    let desk = |s: &HelpSession| -> HelpMessage { s.messages.last().unwrap().clone() };
    assert_eq!(desk(&typed).role, Speaker::Desk);
    assert_eq!(
        (desk(&typed).text, desk(&typed).footer),
        (desk(&button).text, desk(&button).footer)
    );
    assert_eq!(desk(&button).footer.as_deref(), Some(HANDOFF_FOOTER));
    // The typed request is in the transcript as the user wrote it; the button adds no user line.
    assert_eq!(typed.messages.len(), button.messages.len() + 1);
}

//! A help desk's clarifying questions as interrupts, through `handle`: opened by the turn that
//! asks, answered by the next, skipped by a request for a person (typed or the button, before or
//! after a person has the session) and by the operator closing the session.

mod common;

use common::help::{World, begun, doc, turn_on};
use stepwise_core::help::session::MAX_TURNS;
use stepwise_core::help::{Caller, HelpCommand, HelpSession, handle};
use stepwise_core::interrupt::{InterruptKind, InterruptState, Resolution};

#[test]
fn each_clarifying_question_is_an_interrupt_the_next_turn_resolves() {
    let article = doc("crash", &["Which device?", "Version?"], false, "en");
    let mut world = World::new(Some(article));
    let session = begun("o1");
    let asked = turn_on(&session, &mut world, "t1", "My app crashes on start", 2000);
    let first = asked.view().interrupt.unwrap();
    assert_eq!(first.id, "s1-q1");
    assert_eq!(first.kind, InterruptKind::Question);
    assert_eq!(first.state, InterruptState::Open);
    assert_eq!(first.summary, "Question 1 of 2: Which device?");
    assert_eq!((first.opened_at, first.deadline), (2001, None));
    let answered = turn_on(&asked, &mut world, "t2", "Pixel 7", 3000);
    let second = answered.view().interrupt.unwrap();
    assert_eq!(
        (second.id.as_str(), second.state),
        ("s1-q2", InterruptState::Open)
    );
    let done = turn_on(&answered, &mut world, "t3", "12", 4000);
    let last = done.view().interrupt.unwrap();
    assert_eq!(last.id, "s1-q2");
    assert_eq!(last.resolution, Some(Resolution::Answered));
    assert_eq!(
        (last.resolved_at, last.resolved_by.as_deref()),
        (Some(4001), Some("user"))
    );
    // A new question starts the loop again: the turn that asks opens its own interrupt.
    let again = turn_on(&done, &mut world, "t4", "It crashes again", 5000);
    let reopened = again.view().interrupt.unwrap();
    assert_eq!(
        (reopened.id.as_str(), reopened.state),
        ("s1-q4", InterruptState::Open)
    );
}

/// The owner of the sessions here.
fn owner() -> Caller {
    Caller::Owner("o1".into())
}

/// The session after `command` of `caller` at `at`, when the command changed it.
fn changed(
    session: &HelpSession,
    caller: &Caller,
    command: HelpCommand,
    at: u64,
) -> Option<HelpSession> {
    handle(Some(session), "s1", caller, &command, at)
        .unwrap()
        .record
}

/// A world of one two-question article, and a session whose first question the owner left
/// with the "Talk to a person" button.
fn handed_over() -> (World, HelpSession) {
    let article = doc("crash", &["Which device?", "Version?"], false, "en");
    let mut world = World::new(Some(article));
    let asked = turn_on(&begun("o1"), &mut world, "t1", "My app crashes", 2000);
    let handed = changed(&asked, &owner(), HelpCommand::RequestHandoff, 2100).unwrap();
    (world, handed)
}

#[test]
fn a_question_is_skipped_by_a_request_for_a_person_and_by_the_operator_closing_the_session() {
    let (mut world, handed) = handed_over();
    let skipped = handed.view().interrupt.unwrap();
    assert_eq!(skipped.resolution, Some(Resolution::Skipped));
    assert_eq!(
        skipped.reason.as_deref(),
        Some("the user asked for a person")
    );
    // With a person on the session the desk still asks; a typed request skips the same way.
    let again = turn_on(&handed, &mut world, "t2", "It crashes again", 3000);
    assert_eq!(again.view().interrupt.unwrap().state, InterruptState::Open);
    let typed = turn_on(&again, &mut world, "t3", "I want to talk to a person", 4000);
    let waited = typed.view().interrupt.unwrap();
    assert_eq!(
        (waited.id.as_str(), waited.reason.as_deref()),
        ("s1-q2", Some("the user asked for a person"))
    );
    // A question still waiting when an operator closes the session is skipped by the system.
    let asking = turn_on(&typed, &mut world, "t4", "My app crashes on start", 5000);
    assert_eq!(asking.view().interrupt.unwrap().state, InterruptState::Open);
    let closed = changed(&asking, &Caller::Operator, HelpCommand::Resolve, 6000).unwrap();
    let never = closed.view().interrupt.unwrap();
    assert_eq!(never.resolution, Some(Resolution::Skipped));
    assert_eq!(never.resolved_by.as_deref(), Some("system"));
    assert_eq!(never.reason.as_deref(), Some("the session was closed"));
}

#[test]
fn the_button_skips_a_question_asked_after_a_person_has_the_session_and_a_last_turn_asks_none() {
    let (mut world, handed) = handed_over();
    let again = turn_on(&handed, &mut world, "t2", "It crashes again", 3000);
    let pressed = changed(&again, &owner(), HelpCommand::RequestHandoff, 3100)
        .expect("the waiting question changed");
    let skipped = pressed.view().interrupt.unwrap();
    assert_eq!(
        (skipped.id.as_str(), skipped.resolution),
        ("s1-q2", Some(Resolution::Skipped))
    );
    assert_eq!(skipped.resolved_by.as_deref(), Some("user"));
    // Pressed again: nothing waits, nothing changes.
    let twice = changed(&pressed, &owner(), HelpCommand::RequestHandoff, 3200);
    assert!(twice.is_none());

    // A question asked by the session's last turn can never be answered: skipped at once.
    let mut session = begun("o2");
    // An article of more questions than turns: every turn asks, the 40th too.
    let questions: Vec<String> = (1..=50).map(|n| format!("Question {n}?")).collect();
    let questions: Vec<&str> = questions.iter().map(String::as_str).collect();
    let mut world = World::new(Some(doc("long", &questions, false, "en")));
    for n in 0..MAX_TURNS {
        let message = if n == 0 { "My app crashes" } else { "yes" };
        let at = 2000 + 1000 * u64::from(n);
        session = turn_on(&session, &mut world, &format!("t{n}"), message, at);
    }
    assert_eq!(session.turns, MAX_TURNS);
    let last = session.view().interrupt.unwrap();
    assert_eq!(last.id, format!("s1-q{MAX_TURNS}"));
    assert_eq!(last.resolution, Some(Resolution::Skipped));
    assert_eq!(
        last.reason.as_deref(),
        Some("the session reached its limit of turns")
    );
}

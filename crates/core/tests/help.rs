//! The help desk's pipeline and sessions: every node, whole loops driven against a small
//! in-memory world, spec §7's trace, and the property that no search happens while a
//! clarification loop is active (the starter knowledge base: `help_starter.rs`).

mod common;

use common::help::{World, begun, doc, looping, outcome_of, turn_on};
use proptest::prelude::*;
use stepwise_core::help::pipeline::{HANDOFF_FOOTER, HANDOFF_OFFER, NO_ANSWER};
use stepwise_core::help::session::EscalationReason;
use stepwise_core::help::text::wants_person;
use stepwise_core::help::{
    Caller, ClarificationContext, DialogState, Effect, HelpCommand, HelpState, Input, Node,
    Pipeline, SessionStatus, Step, handle,
};

#[test]
fn spec_trace_stores_12_for_version_and_asks_the_next_question_without_searching() {
    let state = looping(
        &["Device?", "Version?", "Describe error"],
        1,
        &[("Device?", "Pixel")],
    );
    let mut world = World::new(Some(doc("other", &[], false, "en")));
    let outcome = world.turn(&state, "12");
    assert!(
        world.effects.is_empty(),
        "no effect at all: {:?}",
        world.effects
    );
    assert_eq!(
        outcome.trace,
        [Node::Guardrails, Node::Router, Node::Clarification]
    );
    let context = outcome.state.clarification_context.as_ref().unwrap();
    assert_eq!(
        context.answers.0,
        [
            ("Device?".into(), "Pixel".into()),
            ("Version?".into(), "12".into())
        ]
    );
    assert_eq!(context.current_index, 2);
    assert!(context.active);
    assert_eq!(outcome.reply, "Describe error");
    let question = outcome.question.unwrap();
    assert_eq!((question.number, question.total), (3, 3));
    assert_eq!(outcome.dialog_state, DialogState::NeedsClarification);
    assert!(!outcome.searched);
}

#[test]
fn a_whole_loop_searches_once_then_generates_from_the_article_and_the_answers() {
    let article = doc("crash", &["Which device?", "Version?"], false, "en");
    let mut world = World::new(Some(article));
    let first = world.turn(&HelpState::default(), "My app crashes on start");
    assert_eq!(
        first.trace,
        [
            Node::Guardrails,
            Node::Router,
            Node::CheckCache,
            Node::HybridSearch,
            Node::Clarification
        ]
    );
    assert_eq!(first.reply, "Which device?");
    let context = first.state.clarification_context.clone().unwrap();
    assert!(context.active && context.current_index == 0 && context.answers.0.is_empty());
    assert_eq!(context.original_doc_content, "The body of crash.");
    let second = world.turn(&first.state, " Pixel 7 ");
    assert_eq!(second.reply, "Version?");
    let third = world.turn(&second.state, "12");
    assert_eq!(world.searches(), 1);
    assert_eq!(
        third.trace,
        [
            Node::Guardrails,
            Node::Router,
            Node::Clarification,
            Node::PromptRouting,
            Node::Generation
        ]
    );
    assert_eq!(
        third.reply,
        "ANSWER<Context: The body of crash.\n\nThe user has provided the following details:\n\
         - Question: Which device? -> Answer:  Pixel 7 \n- Question: Version? -> Answer: 12\n\n\
         User Query: My app crashes on start>"
    );
    assert_eq!(third.dialog_state, DialogState::AnswerProvided);
    assert!(!third.state.clarifying());
    assert!(
        third.cache.is_none(),
        "answers that needed clarification are not cached"
    );
    // The next message is a new question: searched again.
    let fourth = world.turn(&third.state, "How do I share a report?");
    assert!(fourth.searched);
    assert_eq!(world.searches(), 2);
}

#[test]
fn an_article_needing_a_person_answers_first_then_offers_one_and_a_yes_hands_over() {
    let mut world = World::new(Some(doc("billing", &["Invoice number?"], true, "en")));
    let first = world.turn(&HelpState::default(), "I was charged twice");
    assert!(first.escalate.is_none() && first.footer.is_none());
    let answered = world.turn(&first.state, "INV-7");
    assert!(matches!(world.effects.last(), Some(Effect::Generate(_))));
    // The answer comes first and says a person is needed; nothing is handed over unasked.
    assert!(answered.reply.starts_with("ANSWER<"));
    assert!(
        answered.reply.ends_with(HANDOFF_OFFER),
        "{}",
        answered.reply
    );
    assert_eq!(answered.escalate, None);
    assert_eq!(answered.footer, None);
    assert!(answered.offer_handoff);
    assert_eq!(answered.dialog_state, DialogState::AnswerProvided);
    assert!(answered.cache.is_none());
    assert!(answered.state.pending_handoff);
    assert_eq!(
        answered.source.as_ref().map(|d| d.id.as_str()),
        Some("billing")
    );
    // The user accepts: the handoff node, no search, the footer after the reply.
    world.effects.clear();
    let accepted = world.turn(&answered.state, "yes please");
    assert!(world.effects.is_empty());
    assert_eq!(
        accepted.trace,
        [Node::Guardrails, Node::Router, Node::Handoff]
    );
    assert_eq!(accepted.escalate, Some(EscalationReason::Article));
    assert_eq!(accepted.footer.as_deref(), Some(HANDOFF_FOOTER));
    assert_eq!(accepted.dialog_state, DialogState::Escalated);
    // Declining is asking something else: searched, and the offer is gone.
    let declined = world.turn(&answered.state, "How do I share a report?");
    assert!(declined.searched && declined.escalate.is_none());
    assert!(!declined.state.pending_handoff);
}

#[test]
fn an_article_without_questions_is_answered_at_once_and_cached() {
    let mut world = World::new(Some(doc("share", &[], false, "en")));
    let outcome = world.turn(&HelpState::default(), "How do I SHARE a report?");
    assert_eq!(
        outcome.trace,
        [
            Node::Guardrails,
            Node::Router,
            Node::CheckCache,
            Node::HybridSearch,
            Node::PromptRouting,
            Node::Generation
        ]
    );
    let (key, cached) = outcome.cache.clone().unwrap();
    assert_eq!(key, "how do i share a report");
    assert_eq!(cached.doc.id, "share");
    // The same question again: the cache answers, search is skipped.
    world.cached = Some(cached);
    world.effects.clear();
    let again = world.turn(&outcome.state, "how do i share a report");
    assert_eq!(
        again.trace,
        [Node::Guardrails, Node::Router, Node::CheckCache]
    );
    assert_eq!(world.searches(), 0);
    assert_eq!(again.reply, outcome.reply);
    assert!(!again.searched);
}

#[test]
fn nothing_above_the_threshold_says_so_and_offers_a_person() {
    let mut world = World::new(None);
    let outcome = world.turn(&HelpState::default(), "How do I bake bread?");
    assert!(outcome.no_answer && outcome.offer_handoff);
    assert_eq!(outcome.source, None);
    assert_eq!(outcome.reply, NO_ANSWER);
    assert_eq!(outcome.dialog_state, DialogState::AnswerProvided);
    match &world.effects[1] {
        Effect::Search { fts, .. } => assert_eq!(fts.as_deref(), Some(r#""bake" OR "bread""#)),
        other => panic!("expected a search, got {other:?}"),
    }
}

#[test]
fn questions_are_translated_only_for_another_language() {
    let mut world = World::new(Some(doc(
        "webhook",
        &["Which URL?", "Which event?"],
        false,
        "en",
    )));
    let german = world.turn(&HelpState::default(), "Wie richte ich den Webhook ein?");
    assert_eq!(german.reply, "[de] Which URL?");
    assert_eq!(german.question.as_ref().unwrap().text, "[de] Which URL?");
    let next = world.turn(&german.state, "https://example.org/hook");
    assert_eq!(next.reply, "[de] Which event?");
    // The answers stay keyed by the article's own questions.
    let context = next.state.clarification_context.as_ref().unwrap();
    assert_eq!(context.answers.0[0].0, "Which URL?");
    let translations = world
        .effects
        .iter()
        .filter(|e| matches!(e, Effect::Translate(_)))
        .count();
    assert_eq!(translations, 2);

    let mut english = World::new(Some(doc("webhook", &["Which URL?"], false, "en")));
    let outcome = english.turn(&HelpState::default(), "How do I set up the webhook?");
    assert_eq!(outcome.reply, "Which URL?");
    assert!(
        !english
            .effects
            .iter()
            .any(|e| matches!(e, Effect::Translate(_)))
    );
}

#[test]
fn a_failed_translation_asks_the_question_as_written() {
    let state = HelpState::default();
    let (mut pipeline, _) = Pipeline::start(&state, "Wie richte ich den Webhook ein?").unwrap();
    pipeline.resume(Input::Cached(None));
    let step = pipeline.resume(Input::Found(Some(doc(
        "webhook",
        &["Which URL?"],
        false,
        "en",
    ))));
    assert!(matches!(step, Step::Effect(Effect::Translate(_))));
    match pipeline.resume(Input::Translated(None)) {
        Step::Done(outcome) => assert_eq!(outcome.reply, "Which URL?"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn guardrails_refuse_empty_and_overlong_messages() {
    assert_eq!(
        Pipeline::start(&HelpState::default(), "\n\t ")
            .unwrap_err()
            .code(),
        "empty_message"
    );
    let long = "x".repeat(2001);
    assert_eq!(
        Pipeline::start(&HelpState::default(), &long)
            .unwrap_err()
            .code(),
        "message_too_long"
    );
    // Inside a loop too: an empty answer is not an answer.
    let state = looping(&["Version?"], 0, &[]);
    assert!(Pipeline::start(&state, " ").is_err());
}

#[test]
fn answers_keep_the_questions_order_in_json() {
    let state = looping(
        &["Zeta?", "Alpha?", "Mid?"],
        2,
        &[("Zeta?", "1"), ("Alpha?", "2")],
    );
    let json = serde_json::to_string(&state.clarification_context).unwrap();
    assert!(
        json.contains(r#""answers":{"Zeta?":"1","Alpha?":"2"}"#),
        "{json}"
    );
    let mut keys = vec![
        "active",
        "questions",
        "current_index",
        "answers",
        "original_doc_content",
        "requires_handoff",
    ];
    keys.sort_unstable();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut found: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    found.sort_unstable();
    assert_eq!(found, keys, "exactly the spec's fields");
    let back: Option<ClarificationContext> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, state.clarification_context);
}

#[test]
fn sessions_commit_turns_under_a_lease_and_hand_over_when_the_offer_is_accepted() {
    let owner = Caller::Owner("o1".into());
    let mut world = World::new(Some(doc("billing", &["Invoice?"], true, "en")));
    let session = begun("o1");
    let turn = outcome_of(&mut world, &session.state, "Charged twice");
    let late = HelpCommand::Commit {
        lease_id: "t1".into(),
        turn: Box::new(turn.clone()),
    };
    assert_eq!(
        handle(Some(&session), "s1", &owner, &late, 2000)
            .unwrap_err()
            .code(),
        "lease_expired"
    );
    let other = HelpCommand::Commit {
        lease_id: "t9".into(),
        turn: Box::new(turn.clone()),
    };
    assert!(handle(Some(&session), "s1", &owner, &other, 20).is_err());
    let commit = HelpCommand::Commit {
        lease_id: "t1".into(),
        turn: Box::new(turn),
    };
    let session = handle(Some(&session), "s1", &owner, &commit, 20)
        .unwrap()
        .record
        .unwrap();
    assert_eq!(
        (session.turns, session.search_calls, session.messages.len()),
        (1, 1, 2)
    );
    assert!(session.lease.is_none());
    // Operators see only escalated sessions.
    assert_eq!(
        handle(
            Some(&session),
            "s1",
            &Caller::Operator,
            &HelpCommand::Read,
            21
        )
        .unwrap_err()
        .code(),
        "help_session_not_found"
    );

    // The answer offers a person; the session stays the user's until they accept.
    let session = turn_on(&session, &mut world, "t2", "INV-7", 30);
    assert_eq!(session.status, SessionStatus::Open);
    assert!(session.escalation.is_none() && session.handoff_offered);
    assert!(session.messages[3].text.ends_with(HANDOFF_OFFER));
    assert_eq!(session.messages[3].doc.as_ref().unwrap().id, "billing");
    let session = turn_on(&session, &mut world, "t3", "yes", 40);
    assert_eq!(session.status, SessionStatus::Escalated);
    assert_eq!(
        session.escalation.as_ref().unwrap().reason,
        EscalationReason::Article
    );
    assert_eq!(
        session.search_calls, 1,
        "neither the answer to the question nor the yes searched"
    );
    assert_eq!(session.messages[5].footer.as_deref(), Some(HANDOFF_FOOTER));
    assert_eq!(session.messages[4].text, "yes");
    assert!(session.state.handed_over && !session.handoff_offered);
    // The user keeps asking while a person has the session; asking for one again changes nothing.
    let more = turn_on(&session, &mut world, "t4", "How do I share a report?", 5000);
    assert_eq!(more.status, SessionStatus::Escalated);
    assert_eq!((more.turns, more.search_calls), (4, 2));
    // What the person takes over stays as it was handed over.
    let escalation = more.escalation.as_ref().unwrap();
    assert_eq!(escalation, session.escalation.as_ref().unwrap());
    assert_eq!(escalation.query.as_deref(), Some("Charged twice"));
    assert_eq!(escalation.doc.as_ref().unwrap().id, "billing");
    assert_eq!(
        escalation.answers.0,
        [("Invoice?".to_owned(), "INV-7".to_owned())]
    );
    let again = turn_on(&more, &mut world, "t5", "I want to talk to a person", 60);
    assert_eq!(again.escalation, more.escalation);
    assert_eq!(again.messages.last().unwrap().footer, None);
    assert!(
        handle(Some(&again), "s1", &owner, &HelpCommand::RequestHandoff, 70)
            .unwrap()
            .record
            .is_none(),
        "the button changes nothing either"
    );
    // The operator can read and resolve it, the owner cannot resolve; closed, it takes no turn.
    assert!(handle(Some(&again), "s1", &owner, &HelpCommand::Resolve, 70).is_err());
    let read = handle(
        Some(&again),
        "s1",
        &Caller::Operator,
        &HelpCommand::Read,
        70,
    )
    .unwrap();
    assert_eq!(read.reply.session.messages.len(), 10);
    let resolved = handle(
        Some(&again),
        "s1",
        &Caller::Operator,
        &HelpCommand::Resolve,
        80,
    )
    .unwrap()
    .record
    .unwrap();
    assert_eq!(resolved.status, SessionStatus::Resolved);
    assert_eq!(
        handle(
            Some(&resolved),
            "s1",
            &Caller::Operator,
            &HelpCommand::Resolve,
            81
        )
        .unwrap_err()
        .code(),
        "not_escalated"
    );
    let begin = HelpCommand::Begin {
        lease_id: "t6".into(),
        lease_ms: 1000,
        create: false,
    };
    assert_eq!(
        handle(Some(&resolved), "s1", &owner, &begin, 82)
            .unwrap_err()
            .code(),
        "session_closed"
    );
}

#[test]
fn every_turn_begun_has_a_number_of_its_own_even_one_given_up() {
    let owner = Caller::Owner("o1".into());
    let begin = |id: &str| HelpCommand::Begin {
        lease_id: id.into(),
        lease_ms: 1000,
        create: false,
    };
    let first = begun("o1");
    assert_eq!(first.begun, 1);
    let mut world = World::new(Some(doc("billing", &["Invoice?"], true, "en")));
    let commit = HelpCommand::Commit {
        lease_id: "t1".into(),
        turn: Box::new(outcome_of(&mut world, &first.state, "Charged twice")),
    };
    let session = handle(Some(&first), "s1", &owner, &commit, 20)
        .unwrap()
        .record
        .unwrap();
    // The second turn is given up (it failed, or was stopped): the session does not count it,
    // and the third is numbered after it all the same.
    let second = handle(Some(&session), "s1", &owner, &begin("t2"), 30).unwrap();
    assert_eq!(second.reply.begun, Some(2));
    let release = HelpCommand::Release {
        lease_id: "t2".into(),
    };
    let given_up = handle(second.record.as_ref(), "s1", &owner, &release, 40)
        .unwrap()
        .record
        .unwrap();
    assert_eq!((given_up.turns, given_up.begun), (1, 2));
    let third = handle(Some(&given_up), "s1", &owner, &begin("t3"), 50).unwrap();
    assert_eq!(third.reply.begun, Some(3));
    // Only a Begin numbers a turn.
    assert_eq!(
        handle(Some(&given_up), "s1", &owner, &HelpCommand::Read, 50)
            .unwrap()
            .reply
            .begun,
        None
    );
    // A record stored before turns were numbered counts on from its turns.
    let mut older = given_up.clone();
    (older.begun, older.turns) = (0, 4);
    let next = handle(Some(&older), "s1", &owner, &begin("t4"), 60).unwrap();
    assert_eq!(next.reply.begun, Some(5));
}

#[test]
fn a_first_turn_given_up_leaves_no_session_and_a_user_may_ask_for_a_person() {
    let owner = Caller::Owner("o1".into());
    let session = begun("o1");
    let release = HelpCommand::Release {
        lease_id: "t1".into(),
    };
    assert!(
        handle(Some(&session), "s1", &owner, &release, 20)
            .unwrap()
            .erase
    );
    assert_eq!(
        handle(
            Some(&session),
            "s1",
            &owner,
            &HelpCommand::RequestHandoff,
            20
        )
        .unwrap_err()
        .code(),
        "turn_in_progress"
    );
    let mut free = session.clone();
    free.lease = None;
    let handled = handle(Some(&free), "s1", &owner, &HelpCommand::RequestHandoff, 30).unwrap();
    assert!(handled.reply.escalated);
    let escalated = handled.record.unwrap();
    assert_eq!(
        escalated.escalation.unwrap().reason,
        EscalationReason::Requested
    );
    let stranger = Caller::Owner("o2".into());
    assert_eq!(
        handle(
            Some(&free),
            "s1",
            &stranger,
            &HelpCommand::RequestHandoff,
            30
        )
        .unwrap_err()
        .code(),
        "help_session_not_found"
    );
    let begin = HelpCommand::Begin {
        lease_id: "x".into(),
        lease_ms: 10,
        create: true,
    };
    assert!(
        handle(Some(&free), "s1", &stranger, &begin, 30).is_err(),
        "a stranger never takes over a session id"
    );
    // A client's id that names no session is not found, as another owner's is: never created.
    let unknown = HelpCommand::Begin {
        lease_id: "y".into(),
        lease_ms: 10,
        create: false,
    };
    let missing = handle(None, "s2", &owner, &unknown, 30).unwrap_err();
    assert_eq!(missing.code(), "help_session_not_found");
}

proptest! {
    /// While a loop is active, whatever the user sends and whatever the world answers, the
    /// machine never asks to search or to look up the cache.
    #[test]
    fn no_search_effect_while_active(
        count in 1usize..6,
        index_seed in 0usize..6,
        message in "\\PC{1,40}",
        translated in proptest::option::of("\\PC{0,20}"),
        language in prop_oneof![Just("en"), Just("de"), Just("fr")],
    ) {
        prop_assume!(!message.trim().is_empty() && !wants_person(&message));
        let questions: Vec<String> = (0..count).map(|i| format!("Question {i}?")).collect();
        let refs: Vec<&str> = questions.iter().map(String::as_str).collect();
        let mut state = looping(&refs, index_seed % count, &[]);
        state.user_language = Some(language.into());
        let (mut pipeline, mut step) = Pipeline::start(&state, &message).unwrap();
        let mut rounds = 0;
        while let Step::Effect(effect) = step {
            let searches = matches!(effect, Effect::Search { .. } | Effect::LookupCache { .. });
            prop_assert!(!searches, "searched while active");
            let input = match effect {
                Effect::Translate(_) => Input::Translated(translated.clone()),
                _ => Input::Generated("answer".into()),
            };
            step = pipeline.resume(input);
            rounds += 1;
            prop_assert!(rounds < 4);
        }
        let Step::Done(outcome) = step else { unreachable!() };
        prop_assert!(!outcome.searched);
        prop_assert_eq!(&outcome.trace[..3], &[Node::Guardrails, Node::Router, Node::Clarification]);
        let context = outcome.state.clarification_context.as_ref().unwrap();
        prop_assert_eq!(context.answers.0.last().map(|(_, a)| a.as_str()), Some(message.as_str()));
    }
}

#[test]
fn escalations_are_marked_announced_once_and_owners_delete_their_sessions() {
    let owner = Caller::Owner("o1".into());
    let mut session = begun("o1");
    session.lease = None;
    let handed = handle(
        Some(&session),
        "s1",
        &owner,
        &HelpCommand::RequestHandoff,
        20,
    )
    .unwrap();
    let escalated = handed.record.unwrap();
    assert!(!escalated.escalation.as_ref().unwrap().announced);
    assert!(
        handle(Some(&escalated), "s1", &owner, &HelpCommand::Announced, 21).is_err(),
        "only the object marks it"
    );
    let marked = handle(
        Some(&escalated),
        "s1",
        &Caller::Operator,
        &HelpCommand::Announced,
        21,
    )
    .unwrap();
    let announced = marked.record.unwrap();
    assert!(announced.escalation.as_ref().unwrap().announced);
    let again = handle(
        Some(&announced),
        "s1",
        &Caller::Operator,
        &HelpCommand::Announced,
        22,
    )
    .unwrap();
    assert!(again.record.is_none(), "marking twice changes nothing");
    assert!(
        handle(
            Some(&announced),
            "s1",
            &Caller::Owner("o2".into()),
            &HelpCommand::Delete,
            23
        )
        .is_err()
    );
    assert!(
        handle(
            Some(&announced),
            "s1",
            &Caller::Operator,
            &HelpCommand::Delete,
            23
        )
        .is_err()
    );
    assert!(
        handle(Some(&announced), "s1", &owner, &HelpCommand::Delete, 23)
            .unwrap()
            .erase
    );
}

//! The conversation protocol: owners, tokens, one turn at a time, stale turns, leases, and the
//! history the model reads.

use stepwise_core::agent::ToolUse;
use stepwise_core::conversation::{
    Command, Conversation, ConversationError, Entry, EntryStatus, GuidedState,
    MAX_STORED_TOOL_OUTPUT, MAX_TURNS, Reply, handle, model_history,
};
use stepwise_core::protocol::Role;

const LEASE: u64 = 1_000;

/// Applies a command and returns the new record (the old one when unchanged) and the reply.
fn apply(
    record: &Option<Conversation>,
    owner: &str,
    command: Command,
    now: u64,
) -> Result<(Option<Conversation>, Reply), ConversationError> {
    let handled = handle(record.as_ref(), "c1", owner, &command, now)?;
    let next = if handled.erase {
        None
    } else {
        handled.record.or_else(|| record.clone())
    };
    Ok((next, handled.reply))
}

fn lease_of(reply: &Reply) -> u32 {
    match reply {
        Reply::Begun { lease, .. } => *lease,
        other => panic!("not begun: {other:?}"),
    }
}

/// A new assistant conversation whose first turn, on `message`, has begun at `now`: the record
/// and the turn's lease.
fn first_turn(message: &str, now: u64) -> (Option<Conversation>, u32) {
    let begin = Command::BeginAssistant {
        message: message.into(),
        start: true,
        lease_ms: LEASE,
    };
    let (record, reply) = apply(&None, "o1", begin, now).unwrap();
    (record, lease_of(&reply))
}

/// An answer of the assistant.
fn answer(text: &str, at: u64) -> Entry {
    let mut entry = Entry::user(text, at, None);
    entry.role = Role::Assistant;
    entry
}

fn begin_guided(turns: u32) -> Command {
    Command::BeginGuided {
        token_hash: "hash-a".into(),
        turns: Some(turns),
        lease_ms: LEASE,
    }
}

fn start_guided() -> Command {
    Command::BeginGuided {
        token_hash: "hash-a".into(),
        turns: None,
        lease_ms: LEASE,
    }
}

fn state(step: &str) -> GuidedState {
    GuidedState {
        workflow: "research_stream".into(),
        current_step: step.into(),
        ..GuidedState::default()
    }
}

#[test]
fn guided_turns_are_serialized_and_build_on_the_current_count() {
    let (record, reply) = apply(&None, "o1", start_guided(), 0).unwrap();
    let lease = lease_of(&reply);
    // A second tab cannot start a turn while one runs.
    let busy = apply(&record, "o1", begin_guided(0), 10).unwrap_err();
    assert_eq!(busy.code(), "turn_in_progress");
    let (record, _) = apply(
        &record,
        "o1",
        Command::CommitGuided {
            lease,
            state: state("business_goals"),
        },
        20,
    )
    .unwrap();
    assert_eq!(record.as_ref().unwrap().turns, 1);
    // A tab still at 0 turns is stale.
    let stale = apply(&record, "o1", begin_guided(0), 30).unwrap_err();
    assert_eq!(
        stale,
        ConversationError::StaleTurn {
            stated: 0,
            current: 1
        }
    );
    let (record, reply) = apply(&record, "o1", begin_guided(1), 40).unwrap();
    match reply {
        Reply::Begun {
            turn, conversation, ..
        } => {
            assert_eq!(turn, 2);
            assert_eq!(conversation.guided.unwrap().current_step, "business_goals");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(record.unwrap().running.unwrap().turn, 2);
}

#[test]
fn a_first_guided_turn_is_stored_whole_with_no_lease_and_never_over_another() {
    let create = Command::CreateGuided {
        token_hash: "hash-a".into(),
        state: state("business_goals"),
    };
    let (record, reply) = apply(&None, "o1", create.clone(), 5).unwrap();
    let stored = record.clone().unwrap();
    assert_eq!((stored.turns, stored.running, stored.leases), (1, None, 0));
    assert_eq!(stored.guided.unwrap().current_step, "business_goals");
    assert!(matches!(reply, Reply::Conversation(_)));
    // The next turn builds on it like on any other.
    let (record, reply) = apply(&record, "o1", begin_guided(1), 10).unwrap();
    assert_eq!(lease_of(&reply), 1);
    // An id that names a stored conversation never starts a new one, whoever asks.
    assert_eq!(
        apply(&record, "o1", create.clone(), 20).unwrap_err(),
        ConversationError::NotFound
    );
    assert_eq!(
        apply(&record, "o2", create, 20).unwrap_err(),
        ConversationError::NotFound
    );
}

#[test]
fn a_turn_that_never_commits_is_given_up_and_its_late_commit_refused() {
    let (record, reply) = apply(&None, "o1", start_guided(), 0).unwrap();
    let first = lease_of(&reply);
    let (record, _) = apply(
        &record,
        "o1",
        Command::CommitGuided {
            lease: first,
            state: state("a"),
        },
        5,
    )
    .unwrap();
    let (record, reply) = apply(&record, "o1", begin_guided(1), 10).unwrap();
    let stuck = lease_of(&reply);
    // Past its lease, the same turn can begin again...
    let (record, reply) = apply(&record, "o1", begin_guided(1), 10 + LEASE).unwrap();
    let again = lease_of(&reply);
    assert_ne!(stuck, again);
    // ...and the stuck one's commit is refused.
    let late = apply(
        &record,
        "o1",
        Command::CommitGuided {
            lease: stuck,
            state: state("x"),
        },
        10 + LEASE + 1,
    );
    assert_eq!(late.unwrap_err(), ConversationError::TurnExpired);
    let (record, _) = apply(
        &record,
        "o1",
        Command::CommitGuided {
            lease: again,
            state: state("b"),
        },
        10 + LEASE + 2,
    )
    .unwrap();
    // A turn whose lease ran out cannot commit either, even when no other turn began.
    let (record, reply) = apply(&record, "o1", begin_guided(2), 20 + LEASE).unwrap();
    let expired = apply(
        &record,
        "o1",
        Command::CommitGuided {
            lease: lease_of(&reply),
            state: state("c"),
        },
        20 + 2 * LEASE,
    );
    assert_eq!(expired.unwrap_err(), ConversationError::TurnExpired);
    let record = record.unwrap();
    assert_eq!(
        (record.turns, record.guided.unwrap().current_step.as_str()),
        (2, "b")
    );
}

#[test]
fn tokens_and_owners_are_checked() {
    let (record, reply) = apply(&None, "o1", start_guided(), 0).unwrap();
    let lease = lease_of(&reply);
    let (record, _) = apply(
        &record,
        "o1",
        Command::CommitGuided {
            lease,
            state: state("a"),
        },
        1,
    )
    .unwrap();
    let wrong_token = Command::BeginGuided {
        token_hash: "hash-b".into(),
        turns: Some(1),
        lease_ms: LEASE,
    };
    assert_eq!(
        apply(&record, "o1", wrong_token, 2).unwrap_err(),
        ConversationError::Forbidden
    );
    // Without a token, a guided conversation is not one the assistant's routes can see.
    for command in [Command::Read { token_hash: None }, Command::Delete] {
        assert_eq!(
            apply(&record, "o1", command, 2).unwrap_err(),
            ConversationError::NotFound
        );
    }
    // Another owner finds nothing, and cannot start a conversation over this one.
    for command in [
        begin_guided(0),
        Command::Read {
            token_hash: Some("hash-a".into()),
        },
        Command::Delete,
        Command::Export,
        Command::Erase,
    ] {
        assert_eq!(
            apply(&record, "o2", command, 3).unwrap_err(),
            ConversationError::NotFound
        );
    }
    let assistant = Command::BeginAssistant {
        message: "hi".into(),
        start: false,
        lease_ms: LEASE,
    };
    assert_eq!(
        apply(&record, "o2", assistant.clone(), 3).unwrap_err(),
        ConversationError::NotFound
    );
    // A guided conversation is not an assistant conversation.
    assert_eq!(
        apply(&record, "o1", assistant, 3).unwrap_err(),
        ConversationError::NotFound
    );
    // A client's id never starts a conversation, and a new id never lands on a stored one.
    for command in [begin_guided(0), begin_guided(2)] {
        assert_eq!(
            apply(&None, "o1", command, 3).unwrap_err(),
            ConversationError::NotFound
        );
    }
    assert_eq!(
        apply(&record, "o1", start_guided(), 3).unwrap_err(),
        ConversationError::NotFound
    );
    let claim = Command::BeginAssistant {
        message: "x".into(),
        start: false,
        lease_ms: LEASE,
    };
    assert_eq!(
        apply(&None, "o1", claim, 3).unwrap_err(),
        ConversationError::NotFound
    );
}

#[test]
fn the_owner_exports_and_erases_a_guided_conversation_without_its_token() {
    let (record, _) = apply(&None, "o1", start_guided(), 1).unwrap();
    let (_, reply) = apply(&record, "o1", Command::Export, 2).unwrap();
    let Reply::Conversation(exported) = reply else {
        panic!("an export answers the conversation, not {reply:?}");
    };
    assert_eq!(exported.id, "c1");
    assert_eq!(exported.token_hash, None, "the token's hash stays inside");
    assert!(record.as_ref().unwrap().token_hash.is_some());
    let (after, reply) = apply(&record, "o1", Command::Erase, 3).unwrap();
    assert_eq!((after, reply), (None, Reply::Deleted));
    assert_eq!(
        apply(&None, "o1", Command::Erase, 4).unwrap_err(),
        ConversationError::NotFound
    );
}

#[test]
fn assistant_conversations_keep_their_messages_and_drop_a_failed_first_turn() {
    let next = Command::BeginAssistant {
        message: "More".into(),
        start: false,
        lease_ms: LEASE,
    };
    let (record, lease) = first_turn("Find EGFR resistance articles please", 0);
    let (gone, reply) = apply(&record, "o1", Command::Abort { lease }, 1).unwrap();
    assert_eq!((gone, reply), (None, Reply::Aborted));

    let (record, lease) = first_turn("Find EGFR resistance articles please", 2);
    let entries = vec![
        Entry::user("Find EGFR resistance articles please", 2, Some("streams")),
        answer("Here is a query.", 3),
    ];
    let (record, _) = apply(
        &record,
        "o1",
        Command::CommitAssistant {
            lease,
            entries,
            resumed: None,
            requests: Vec::new(),
            writing_style: None,
        },
        3,
    )
    .unwrap();
    let stored = record.clone().unwrap();
    assert_eq!(
        (stored.turns, stored.entries.len(), stored.updated_at),
        (1, 2, 3)
    );
    assert_eq!(stored.title, "Find EGFR resistance articles please");
    // A failed later turn keeps the conversation.
    let (record, reply) = apply(&record, "o1", next.clone(), 4).unwrap();
    let (record, _) = apply(
        &record,
        "o1",
        Command::Abort {
            lease: lease_of(&reply),
        },
        5,
    )
    .unwrap();
    assert_eq!(record.as_ref().unwrap().entries.len(), 2);
    assert!(record.as_ref().unwrap().running.is_none());
    // Full conversations refuse new turns.
    let mut full = record.unwrap();
    full.turns = MAX_TURNS;
    assert_eq!(
        apply(&Some(full), "o1", next, 6).unwrap_err(),
        ConversationError::Full
    );
}

#[test]
fn stored_tool_outputs_are_cut() {
    let (record, lease) = first_turn("Abstracts please", 0);
    // A long tool output is kept cut (the model read it whole during the turn).
    let mut answer = answer("Here they are.", 1);
    answer.tool_history.push(ToolUse {
        tool_name: "retrieve_items".into(),
        input: serde_json::json!({"ids": ["1"]}),
        output: "é".repeat(MAX_STORED_TOOL_OUTPUT * 3),
        is_error: false,
    });
    let entries = vec![Entry::user("Abstracts please", 0, None), answer];
    let commit = Command::CommitAssistant {
        lease,
        entries,
        resumed: None,
        requests: Vec::new(),
        writing_style: None,
    };
    let (record, _) = apply(&record, "o1", commit, 1).unwrap();
    let output = &record.as_ref().unwrap().entries[1].tool_history[0].output;
    assert!(output.starts_with(&"é".repeat(MAX_STORED_TOOL_OUTPUT)));
    assert!(output.ends_with("[cut for storage]"));
    assert!(output.chars().count() < MAX_STORED_TOOL_OUTPUT + 40);
}

#[test]
fn the_model_reads_the_newest_messages_that_fit_never_starting_with_an_answer() {
    let mut entries = Vec::new();
    for i in 0..5 {
        entries.push(Entry::user(&format!("question {i}"), i, None));
        entries.push(answer(&format!("answer {i}"), i));
    }
    let all = model_history(&entries, 10_000);
    assert_eq!(all.len(), 10);
    assert_eq!(all[0].content, "question 0");
    // "answer 4" (8) + "question 4" (10) + "answer 3" (8) fit 30; the answer left first is dropped.
    let some = model_history(&entries, 30);
    let contents: Vec<&str> = some.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["question 4", "answer 4"]);
}

#[test]
fn a_turn_whose_host_died_keeps_its_message_and_partial_answer_marked_interrupted() {
    let (record, lease) = first_turn("Summarize the week", 0);
    let mut partial = answer("The week began with", 5);
    partial.status = Some(EntryStatus::Interrupted);
    let entries = vec![Entry::user("Summarize the week", 0, Some("chat")), partial];
    // Accepted after the lease ran out, as long as no other turn began.
    let interrupt = Command::Interrupt {
        lease,
        entries: entries.clone(),
        guided: None,
    };
    let (kept, reply) = apply(&record, "o1", interrupt.clone(), LEASE * 5).unwrap();
    assert_eq!(reply, Reply::Aborted);
    let kept = kept.unwrap();
    assert_eq!((kept.turns, kept.running, kept.entries.len()), (1, None, 2));
    assert_eq!(kept.entries[1].status, Some(EntryStatus::Interrupted));
    // A second settlement of the same turn is refused; so is a stale lease.
    assert_eq!(
        apply(&Some(kept.clone()), "o1", interrupt, LEASE * 6).unwrap_err(),
        ConversationError::TurnExpired
    );
    // The conversation takes new messages.
    let next = Command::BeginAssistant {
        message: "Again".into(),
        start: false,
        lease_ms: LEASE,
    };
    assert!(apply(&Some(kept), "o1", next, LEASE * 7).is_ok());
}

#[test]
fn a_first_turn_that_died_before_it_stored_anything_takes_its_conversation_along() {
    let (record, lease) = first_turn("Hello", 0);
    let interrupt = Command::Interrupt {
        lease,
        entries: Vec::new(),
        guided: None,
    };
    assert_eq!(
        apply(&record, "o1", interrupt, 10).unwrap(),
        (None, Reply::Aborted)
    );
}

#[test]
fn an_answer_cut_short_reads_as_such_and_is_never_empty_in_the_history() {
    let mut stopped = answer("", 2);
    stopped.status = Some(EntryStatus::Stopped);
    let mut interrupted = answer("The first half", 4);
    interrupted.status = Some(EntryStatus::Interrupted);
    let entries = vec![
        Entry::user("Tell me", 1, None),
        stopped,
        Entry::user("Tell me again", 3, None),
        interrupted,
        Entry::user("Once more", 5, None),
    ];
    let history = model_history(&entries, 10_000);
    let contents: Vec<&str> = history.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        contents,
        [
            "Tell me",
            "(this answer was stopped by the user here)",
            "Tell me again",
            "The first half\n(this answer was interrupted here)",
            "Once more"
        ]
    );
}

#[test]
fn a_card_s_outcome_is_kept_sent_to_watchers_and_final_once_accepted() {
    use stepwise_core::conversation::{CardOutcome, ConversationEvent};
    use stepwise_core::json::JsonText;
    use stepwise_core::markers::Payload;
    let (record, lease) = first_turn("Suggest a query", 1);
    let mut reply = answer("Try this.", 2);
    for query in ["EGFR", "ALK"] {
        reply.payloads.push(Payload {
            payload_type: "query_suggestion".into(),
            data: JsonText::parse(&format!(r#"{{"query": "{query}"}}"#)).unwrap(),
        });
    }
    let commit = Command::CommitAssistant {
        lease,
        entries: vec![Entry::user("Suggest a query", 1, None), reply],
        resumed: None,
        requests: Vec::new(),
        writing_style: None,
    };
    // The stored answer is told to the watchers with its index: cards are kept by it.
    let committed = handle(record.as_ref(), "c1", "o1", &commit, 3).unwrap();
    assert!(matches!(
        &committed.events[..],
        [ConversationEvent::Message { index: 1, .. }]
    ));
    let record = committed.record;
    let card = |payload, outcome, note: Option<&str>| Command::SetCard {
        message: 1,
        payload,
        outcome,
        note: note.map(str::to_owned),
    };
    // Dismissed, then accepted: kept, and told to the watchers.
    let handled = handle(
        record.as_ref(),
        "c1",
        "o1",
        &card(0, CardOutcome::Dismissed, None),
        4,
    )
    .unwrap();
    assert!(matches!(
        &handled.events[..],
        [ConversationEvent::Card {
            message: 1,
            payload: 0,
            ..
        }]
    ));
    let record = handled.record;
    let failed = card(1, CardOutcome::Failed, Some(&"x".repeat(500)));
    let (record, _) = apply(&record, "o1", failed, 5).unwrap();
    let (record, _) = apply(
        &record,
        "o1",
        card(0, CardOutcome::Accepted, Some("ignored")),
        6,
    )
    .unwrap();
    let stored = &record.as_ref().unwrap().entries[1].cards;
    assert_eq!(stored[&0].outcome, CardOutcome::Accepted);
    assert_eq!((stored[&0].at, stored[&0].note.as_deref()), (6, None));
    assert_eq!(stored[&1].note.as_ref().unwrap().chars().count(), 300);
    // The same outcome again changes nothing; accepted is final.
    let again = handle(
        record.as_ref(),
        "c1",
        "o1",
        &card(0, CardOutcome::Accepted, None),
        7,
    )
    .unwrap();
    assert!(again.record.is_none() && again.events.is_empty());
    let refused = handle(
        record.as_ref(),
        "c1",
        "o1",
        &card(0, CardOutcome::Dismissed, None),
        7,
    );
    assert_eq!(refused.unwrap_err(), ConversationError::CardSettled);
    // No such card (a user message, a payload past the end), and another owner's: not found.
    for (message, payload) in [(0, 0), (1, 2), (9, 0)] {
        let missing = Command::SetCard {
            message,
            payload,
            outcome: CardOutcome::Dismissed,
            note: None,
        };
        let error = handle(record.as_ref(), "c1", "o1", &missing, 8).unwrap_err();
        assert_eq!(error.code(), "card_not_found");
    }
    let stranger = handle(
        record.as_ref(),
        "c1",
        "o2",
        &card(1, CardOutcome::Dismissed, None),
        8,
    );
    assert_eq!(stranger.unwrap_err(), ConversationError::NotFound);
}

#[test]
fn a_guided_turn_cut_short_keeps_the_users_action_and_message_and_the_answer_so_far() {
    use stepwise_core::protocol::ChatMessage;
    use stepwise_core::workflow::WorkflowState;
    // A conversation with one turn, whose second turn (the user picked a field) has begun.
    let (record, reply) = apply(&None, "o1", start_guided(), 0).unwrap();
    let commit = Command::CommitGuided {
        lease: lease_of(&reply),
        state: state("topic"),
    };
    let (record, _) = apply(&record, "o1", commit, 1).unwrap();
    let (record, reply) = apply(&record, "o1", begin_guided(1), 2).unwrap();
    let lease = lease_of(&reply);
    let planned = WorkflowState {
        current_step: "sources".into(),
        config: Default::default(),
        skipped: vec!["notes".into()],
    };
    let before = [
        ChatMessage::new(Role::User, "Hi"),
        ChatMessage::new(Role::Assistant, "Hello"),
    ];
    let kept = GuidedState::before_answer("research_stream", &planned, &before, "Oncology");
    // The host died: the partial answer is kept, marked interrupted, as the turn.
    let interrupt = Command::Interrupt {
        lease,
        entries: vec![answer("Oncology it is. Next,", 3)],
        guided: Some(kept.clone()),
    };
    let (after, reply) = apply(&record, "o1", interrupt.clone(), LEASE * 5).unwrap();
    assert_eq!(reply, Reply::Aborted);
    let after = after.unwrap();
    assert_eq!((after.turns, after.running), (2, None));
    let guided = after.guided.clone().unwrap();
    assert_eq!(
        (guided.current_step.as_str(), guided.skipped.len()),
        ("sources", 1)
    );
    let history: Vec<(&str, Option<EntryStatus>)> = guided
        .conversation_history
        .iter()
        .map(|m| (m.content.as_str(), m.status))
        .collect();
    assert_eq!(
        history,
        [
            ("Hi", None),
            ("Hello", None),
            ("Oncology", None),
            ("Oncology it is. Next,", Some(EntryStatus::Interrupted)),
        ]
    );
    // Settled once; the conversation then takes its next turn on the new count.
    assert_eq!(
        apply(&Some(after.clone()), "o1", interrupt, LEASE * 6).unwrap_err(),
        ConversationError::TurnExpired
    );
    assert!(apply(&Some(after), "o1", begin_guided(2), LEASE * 7).is_ok());
    // Stopped before any text: the user's message stays, no empty answer is added.
    let stopped = kept.with_partial_answer("", EntryStatus::Stopped);
    assert_eq!(stopped.conversation_history.len(), 3);
    // A guided turn that left no state to keep is given up (a first one takes its record along).
    let (first, reply) = apply(&None, "o1", start_guided(), 0).unwrap();
    let lost = Command::Interrupt {
        lease: lease_of(&reply),
        entries: vec![answer("Half", 1)],
        guided: None,
    };
    assert_eq!(
        apply(&first, "o1", lost, 10).unwrap(),
        (None, Reply::Aborted)
    );
}

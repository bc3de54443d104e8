//! Long conversations: no wall at 100 turns, what a turn is handed stays the same size however
//! long the conversation grows, and the model reads the newest messages with a digest of the
//! ones before, the same from a turn's view as from the whole record.

use proptest::prelude::*;
use stepwise_core::conversation::{
    Command, Conversation, ConversationError, DIGEST_WINDOW, Entry, EntryStatus, MAX_HISTORY_CHARS,
    MAX_STORED_BYTES, MAX_TURN_HISTORY_CHARS, MAX_TURNS, Reply, handle, model_history,
};
use stepwise_core::protocol::Role;

const LEASE: u64 = 60_000;

fn answer(text: &str, at: u64) -> Entry {
    Entry {
        role: Role::Assistant,
        ..Entry::user(text, at, None)
    }
}

/// Begins and commits turn `n` of `record` (the first when `None`): the stored record, and the
/// size of the view the turn was handed, as JSON.
fn one_turn(record: Option<Conversation>, n: u64) -> (Conversation, usize) {
    let message = format!("Question {n}: {}", "about the stream's articles ".repeat(8));
    let begin = Command::BeginAssistant {
        message: message.clone(),
        start: record.is_none(),
        lease_ms: LEASE,
    };
    let begun = handle(record.as_ref(), "c1", "o1", &begin, n * 10).unwrap();
    let Reply::Begun {
        lease,
        conversation,
        ..
    } = &begun.reply
    else {
        panic!("not begun");
    };
    let handed = serde_json::to_string(conversation).unwrap().len();
    assert_eq!(conversation.message_count(), 2 * (n as usize - 1));
    let commit = Command::CommitAssistant {
        lease: *lease,
        entries: vec![
            Entry::user(&message, n * 10, None),
            answer(
                &format!("Answer {n}: {}", "a finding, ".repeat(40)),
                n * 10 + 1,
            ),
        ],
        resumed: None,
        requests: Vec::new(),
        writing_style: None,
    };
    let stored = begun.record.unwrap();
    let committed = handle(Some(&stored), "c1", "o1", &commit, n * 10 + 2).unwrap();
    // The commit answers with the new messages only, and where they are.
    let Reply::Conversation(view) = &committed.reply else {
        panic!("not a conversation");
    };
    assert_eq!(view.entries.len(), 2);
    assert_eq!(view.message_count(), 2 * n as usize);
    (committed.record.unwrap(), handed)
}

#[test]
fn a_conversation_goes_past_300_turns_and_each_turn_is_handed_the_same_size() {
    let mut record = None;
    let mut handed = Vec::new();
    for n in 1..=300 {
        let (next, size) = one_turn(record, n);
        record = Some(next);
        handed.push(size);
    }
    let record = record.unwrap();
    assert_eq!(record.turns, 300);
    assert_eq!(record.entries.len(), 600);
    // Once the history window is full, the view stops growing.
    let (at_200, at_300) = (handed[199], handed[299]);
    assert!(
        at_300 <= at_200 + 100,
        "view at turn 200: {at_200} B, at 300: {at_300} B"
    );
    let whole = serde_json::to_string(&record).unwrap().len();
    assert!(at_300 * 2 < whole, "view {at_300} B of a {whole} B record");
    // The model reads the newest messages, after a digest of earlier ones, all within budget.
    let history = record.for_turn().model_history(MAX_HISTORY_CHARS);
    assert_eq!(history, record.model_history(MAX_HISTORY_CHARS));
    let chars: usize = history.iter().map(|m| m.content.chars().count()).sum();
    assert!(chars <= MAX_HISTORY_CHARS, "{chars} characters");
    assert_eq!(history[0].role, Role::User);
    assert!(
        history[0]
            .content
            .starts_with("(Earlier in this conversation, after "),
        "{}",
        history[0].content
    );
    let digest_lines = history[0]
        .content
        .lines()
        .filter(|l| l.starts_with("- "))
        .count();
    assert!(digest_lines > 0 && digest_lines <= DIGEST_WINDOW);
    assert!(history.last().unwrap().content.starts_with("Answer 300: "));
}

#[test]
fn a_turn_running_an_approval_is_handed_the_message_that_holds_it() {
    let mut record = None;
    for n in 1..=120 {
        record = Some(one_turn(record, n).0);
    }
    let mut record = record.unwrap();
    // An old answer holds the approval the turn runs (far before the history window).
    let approval: stepwise_core::approval::Approval = serde_json::from_value(serde_json::json!({
        "id": "ap1", "tool": "start_research", "call_id": "call-1",
        "arguments": {}, "summary": "Start a job", "estimated_calls": 3,
        "state": "approved", "requested_at": 1, "expires_at": 99
    }))
    .unwrap_or_else(|e| panic!("approval shape: {e}"));
    record.entries[3].approval = Some(approval);
    record.approving = Some("ap1".into());
    let view = record.for_turn();
    assert_eq!(view.entries_from, 3);
    assert_eq!(view.entries[0].approval.as_ref().unwrap().id, "ap1");
}

fn entry_strategy() -> impl Strategy<Value = Entry> {
    // Short messages too, so that the digest's window holds many lines.
    let len = prop_oneof![0usize..60, 0usize..3_000];
    (any::<bool>(), len, any::<bool>(), 0u8..10).prop_map(|(user, len, action, status)| {
        let text = "word ".repeat(len / 5) + &"x".repeat(len % 5);
        let mut entry = if user {
            Entry::user(&text, 1, None)
        } else {
            answer(&text, 1)
        };
        if user && action {
            entry.action = Some("open_job".into());
        }
        if status == 0 {
            entry.status = Some(EntryStatus::WaitingContext);
        }
        entry
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A turn's view gives the model the same history as the whole record, within the budget,
    /// never starting with an answer.
    #[test]
    fn a_turns_view_reads_the_same_history_as_the_whole_record(
        entries in prop::collection::vec(entry_strategy(), 0..400),
        budget in 0usize..(MAX_TURN_HISTORY_CHARS + 10_000),
    ) {
        let start = Command::BeginAssistant { message: "Hi".into(), start: true, lease_ms: LEASE };
        let mut record = handle(None, "c1", "o1", &start, 1).unwrap().record.unwrap();
        record.running = None;
        record.entries = entries;
        let whole = record.model_history(budget);
        let view = record.for_turn();
        prop_assert_eq!(view.message_count(), record.entries.len());
        prop_assert_eq!(&view.model_history(budget), &whole);
        let chars: usize = whole.iter().map(|m| m.content.chars().count()).sum();
        prop_assert!(chars <= budget.min(MAX_TURN_HISTORY_CHARS), "{} of {}", chars, budget);
        prop_assert!(whole.first().is_none_or(|m| m.role == Role::User));
        // The plain function reads whole records the same way.
        prop_assert_eq!(model_history(&record.entries, budget.min(MAX_TURN_HISTORY_CHARS)), whole);
    }
}

#[test]
fn a_conversation_past_its_stored_bytes_takes_no_more_turns() {
    let (mut record, _) = one_turn(None, 1);
    // The bytes stored are counted as messages are added.
    let counted = record.stored_bytes;
    let whole: usize = record
        .entries
        .iter()
        .map(|e| serde_json::to_vec(e).unwrap().len())
        .sum();
    assert_eq!(counted, whole as u64);
    record.stored_bytes = MAX_STORED_BYTES + 1;
    let next = Command::BeginAssistant {
        message: "More".into(),
        start: false,
        lease_ms: LEASE,
    };
    assert_eq!(
        handle(Some(&record), "c1", "o1", &next, 100).unwrap_err(),
        ConversationError::Full
    );
    // Refused for its size alone, far below the turns it may hold.
    assert!(record.turns < MAX_TURNS);
}

#[test]
fn a_long_conversation_is_read_a_page_at_a_time_newest_first_every_message_once() {
    let mut record = None;
    for n in 1..=120 {
        record = Some(one_turn(record, n).0);
    }
    let record = record.unwrap();
    let page = |before: Option<u32>, limit: u32| {
        let read = Command::ReadPage { before, limit };
        match handle(Some(&record), "c1", "o1", &read, 5_000)
            .unwrap()
            .reply
        {
            Reply::Page {
                conversation,
                message_count,
                interrupts,
            } => {
                assert_eq!(message_count, 240);
                assert_eq!(interrupts, conversation.interrupts(), "the page's own");
                *conversation
            }
            other => panic!("not a page: {other:?}"),
        }
    };
    // Newest first, then back to the start: every message once, in order.
    let mut seen: Vec<Entry> = Vec::new();
    let mut before = None;
    loop {
        let got = page(before, 100);
        assert!(got.entries.len() <= 100);
        let from = got.entries_from;
        seen.splice(0..0, got.entries);
        if from == 0 {
            break;
        }
        before = Some(from);
    }
    assert_eq!(seen, record.entries);
    assert_eq!(page(None, 100).entries_from, 140);
    assert_eq!(
        page(Some(30), 100).entries_from,
        0,
        "a page never starts before 0"
    );
    assert_eq!(page(Some(30), 100).entries.len(), 30);
    assert_eq!(page(Some(9_999), 1).entries, record.entries[239..]);
    assert_eq!(page(None, 0).entries.len(), 1, "at least one message");
    // Another owner sees nothing.
    let read = Command::ReadPage {
        before: None,
        limit: 10,
    };
    assert_eq!(
        handle(Some(&record), "c1", "o2", &read, 5_000).unwrap_err(),
        ConversationError::NotFound
    );
    // A guided conversation is not read this way (its reader holds its token).
    let guided = Command::BeginGuided {
        token_hash: "h".into(),
        turns: None,
        lease_ms: LEASE,
    };
    let guided = handle(None, "g1", "o1", &guided, 10)
        .unwrap()
        .record
        .unwrap();
    assert_eq!(
        handle(Some(&guided), "g1", "o1", &read, 20).unwrap_err(),
        ConversationError::NotFound
    );
}

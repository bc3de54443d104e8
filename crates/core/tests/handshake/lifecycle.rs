//! A context request's life on a conversation: deferral, supplies and skips, the quota met,
//! the reminder and the fallback, force, a failed resume, and how each request ended.

use proptest::prelude::*;
use serde_json::json;
use stepwise_core::conversation::{
    Command, Conversation, ConversationError, ConversationEvent, Entry, Reply, SlotSupply, Waiting,
    handle,
};
use stepwise_core::handshake::{Outcome, RequestStatus, SlotState, Urgency};
use stepwise_core::interrupt::InterruptState;

use super::fixtures::*;

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
    // The model call fails: the request is open again, the message still waits, and the
    // watching tabs are told, as an update and as an interrupt open again.
    let aborted = handle(Some(&running), "c1", "o1", &Command::Abort { lease }, 2_200).unwrap();
    let told: Vec<String> = aborted
        .events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        told,
        ["conversation:context_update", "conversation:interrupt"]
    );
    let ConversationEvent::Interrupt { interrupt, .. } = &aborted.events[1] else {
        panic!("an interrupt event")
    };
    assert_eq!(
        (interrupt.id.as_str(), interrupt.state),
        ("q1", InterruptState::Open)
    );
    let failed = aborted.record.unwrap();
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
        guided: None,
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

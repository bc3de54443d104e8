//! The one lifecycle of what a turn waits on, replayed from `tests/vectors/interrupts.json`
//! twice: on a bare `Lifecycle`, and on the record of the case's kind (an approval, a context
//! request, a help-desk question) through `Interruptible::through`, which must agree with it.

mod common;

use serde_json::{Value, json};
use stepwise_core::approval::Approval;
use stepwise_core::handshake::{ContextRequest, Origin, RequestStatus};
use stepwise_core::help::pipeline::QuestionView;
use stepwise_core::help::question::QuestionWait;
use stepwise_core::interrupt::{
    Interrupt, InterruptError, InterruptKind, InterruptState, Interruptible, Lifecycle, Resolution,
};

/// The record a case's kind keeps, opened at `opened_at` with `ttl_ms`.
enum Record {
    Approval(Box<Approval>),
    Context(ContextRequest),
    Question(QuestionWait),
}

impl Record {
    fn open(kind: InterruptKind, opened_at: u64, ttl_ms: Option<u64>) -> Record {
        match kind {
            InterruptKind::Approval => {
                let mut approval = Approval::proposed("start_research", "call_1", json!({}), 3);
                approval.issue("a1", opened_at, ttl_ms.expect("an approval has a deadline"));
                Record::Approval(Box::new(approval))
            }
            InterruptKind::ContextRequest => Record::Context(ContextRequest {
                request_id: "r1".into(),
                user_message_id: "m1".into(),
                origin: Origin::Model,
                created_at: opened_at,
                sla_ms: ttl_ms.expect("a context request has an SLA"),
                reminded: false,
                status: RequestStatus::Open,
                resolved_at: None,
                slots: Vec::new(),
            }),
            InterruptKind::Question => {
                let question = QuestionView {
                    number: 1,
                    total: 2,
                    text: "Which version do you run?".into(),
                };
                Record::Question(QuestionWait::asked("s1", 1, question, opened_at))
            }
        }
    }

    fn step<R>(&mut self, step: impl FnOnce(&mut Lifecycle) -> R) -> R {
        match self {
            Record::Approval(a) => a.through(step),
            Record::Context(c) => c.through(step),
            Record::Question(q) => q.through(step),
        }
    }

    fn interrupt(&self) -> Interrupt {
        match self {
            Record::Approval(a) => a.interrupt(),
            Record::Context(c) => c.interrupt(),
            Record::Question(q) => q.interrupt(),
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(value: &Value) -> T {
    serde_json::from_value(value.clone()).unwrap()
}

/// Runs `op` of `step` on `lifecycle`: whether a remind or an expire did anything, or the
/// error of a resolve or a reopen.
fn run(lifecycle: &mut Lifecycle, step: &Value) -> Result<Option<bool>, InterruptError> {
    let at = step["at"].as_u64().unwrap();
    match step["op"].as_str().unwrap() {
        "wake" => Ok(None),
        "remind" => Ok(Some(lifecycle.remind_if_due(at))),
        "expire" => Ok(Some(lifecycle.expire_if_due(at))),
        "resolve" => lifecycle
            .resolve(
                parse(&step["resolution"]),
                step["by"].as_str().unwrap(),
                step["reason"].as_str(),
                at,
            )
            .map(|()| None),
        "reopen" => lifecycle.reopen().map(|()| None),
        other => panic!("unknown op {other}"),
    }
}

/// The state a vector names: `open` or the resolution.
fn state_of(interrupt: &Interrupt) -> String {
    match (interrupt.state, interrupt.resolution) {
        (InterruptState::Open, None) => "open".into(),
        (InterruptState::Resolved, Some(how)) => how.as_str().into(),
        other => panic!("an interrupt that is {other:?}"),
    }
}

/// What a record must keep of the lifecycle: everything but its id and summary. A context
/// request derives supplied or skipped, and who met it, from its slots (none here), so for it
/// the two are one "met", and a resolver other than the system is compared only when it forced
/// the request.
fn comparable(kind: InterruptKind, interrupt: &Interrupt) -> Interrupt {
    let mut kept = interrupt.clone();
    kept.id = String::new();
    kept.summary = String::new();
    if kind == InterruptKind::ContextRequest
        && matches!(
            kept.resolution,
            Some(Resolution::Supplied | Resolution::Skipped)
        )
    {
        kept.resolution = Some(Resolution::Supplied);
        kept.resolved_by = None;
    }
    kept
}

#[test]
fn every_kind_follows_the_one_lifecycle() {
    let file = common::vectors("interrupts.json");
    let mut steps = 0;
    for case in file["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let kind: InterruptKind = parse(&case["kind"]);
        let opened_at = case["opened_at"].as_u64().unwrap();
        let ttl_ms = case["ttl_ms"].as_u64();
        let mut bare = Lifecycle::open(kind, opened_at, ttl_ms);
        let mut record = Record::open(kind, opened_at, ttl_ms);
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let here = format!("{name} #{i}");
            let answer = run(&mut bare, step);
            let recorded = record.step(|l| run(l, step));
            assert_eq!(
                answer, recorded,
                "{here}: the record answers as the lifecycle"
            );
            match (&answer, step["error"].as_str()) {
                (Err(error), Some(code)) => assert_eq!(error.code(), code, "{here}"),
                (Ok(did), None) => {
                    assert_eq!(
                        did.map(Value::from),
                        step.get("did").cloned(),
                        "{here}: did"
                    )
                }
                (got, want) => panic!("{here}: got {got:?}, the vector wants {want:?}"),
            }
            let view = Interrupt::of("x", String::new(), &bare);
            assert_eq!(state_of(&view), step["state"], "{here}: state");
            if let Some(wake) = step.get("next_wake") {
                assert_eq!(bare.next_wake().map(Value::from).unwrap_or_default(), *wake);
            }
            if let Some(by) = step.get("resolved_by") {
                assert_eq!(view.resolved_by.as_deref(), by.as_str(), "{here}: by");
            }
            if let Some(reason) = step.get("reason_after") {
                assert_eq!(view.reason.as_deref(), reason.as_str(), "{here}: reason");
            }
            let kept = record.interrupt();
            assert_eq!(
                comparable(kind, &kept),
                comparable(kind, &view),
                "{here}: the record keeps what the lifecycle says"
            );
            assert_eq!(kept.kind, kind);
            steps += 1;
        }
    }
    assert!(
        steps >= 40,
        "the vectors cover every transition ({steps} steps)"
    );
}

#[test]
fn each_record_describes_what_it_waits_on() {
    let approval = Record::open(InterruptKind::Approval, 0, Some(10)).interrupt();
    assert_eq!(approval.id, "a1");
    assert!(
        approval.summary.starts_with("Start"),
        "{}",
        approval.summary
    );
    assert_eq!(approval.remind_at, Some(5));
    let question = Record::open(InterruptKind::Question, 0, None).interrupt();
    assert_eq!(question.id, "s1-q1");
    assert_eq!(
        question.summary,
        "Question 1 of 2: Which version do you run?"
    );
    assert_eq!((question.deadline, question.remind_at), (None, None));
    let context = Record::open(InterruptKind::ContextRequest, 0, Some(10)).interrupt();
    assert_eq!(context.id, "r1");
    assert!(context.summary.starts_with("Context for the answer"));
    let wire = serde_json::to_value(&question).unwrap();
    assert_eq!(wire["kind"], "question");
    assert_eq!(wire["state"], "open");
}

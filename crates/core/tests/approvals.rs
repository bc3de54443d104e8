//! Tool approval: the registry's policies, the agent holding a call and ending the turn there,
//! every transition of an approval (approved as proposed or edited, denied, expired, decided
//! once), and the conversation keeping it: the approving step begins the turn that runs the
//! call, so a second click or a retry finds it settled, the alarm expires it, and the model
//! reads what became of it.

mod common;

use serde_json::{Value, json};
use stepwise_core::agent::{Agent, AgentLimits, Step, finish};
use stepwise_core::approval::{Approval, ApprovalError, ApprovalPolicy, ApprovalState};
use stepwise_core::conversation::{
    Command, Conversation, ConversationError, ConversationEvent, Entry, Reply, handle,
    model_history,
};
use stepwise_core::llm::ToolCall;
use stepwise_core::markers::MarkerParser;
use stepwise_core::protocol::Role;
use stepwise_core::registry::Registry;

const LEASE: u64 = 1_000;
const TTL: u64 = 60_000;

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.to_string(),
        malformed: false,
    }
}

fn research_schema() -> Value {
    Registry::builtin()
        .tool("start_research")
        .unwrap()
        .input_schema
        .clone()
}

fn issued(args: Value, now: u64) -> Approval {
    let mut approval = Approval::proposed("start_research", "call_1", args, 3);
    approval.issue("a1", now, TTL);
    approval
}

#[test]
fn policies_say_when_a_call_waits_and_the_builtin_tools_with_side_effects_always_do() {
    let registry = Registry::builtin();
    for name in ["start_research", "update_stream_settings"] {
        let tool = registry.tool(name).unwrap();
        assert_eq!(tool.approval, ApprovalPolicy::Always, "{name}");
        assert!(tool.needs_approval(&json!({})), "{name}");
    }
    for name in ["search_pubmed", "list_research", "create_research_draft"] {
        assert!(
            !registry.tool(name).unwrap().needs_approval(&json!({})),
            "{name}"
        );
    }
    // over_cost: estimated model calls past the threshold.
    let custom = json!({"tools": [{
        "name": "start_research", "description": "d", "approval": "over_cost", "approval_threshold": 2,
        "input_schema": {"type": "object"}
    }]});
    let registry = Registry::from_value(&custom).unwrap();
    let tool = registry.tool("start_research").unwrap();
    assert!(
        !tool.needs_approval(&json!({"prompt": "x", "providers": ["a"]})),
        "1 + title = 2"
    );
    assert!(
        tool.needs_approval(&json!({"prompt": "x", "providers": ["a", "b"]})),
        "2 + synthesis + title"
    );
    // A policy that is not one is refused with its path.
    let bad = json!({"tools": [{"name": "t", "description": "d", "approval": "sometimes", "input_schema": {"type": "object"}}]});
    let why = Registry::from_value(&bad).unwrap_err();
    assert_eq!(why.path, "tools[0].approval");
    let bad = json!({"tools": [{"name": "t", "description": "d", "approval_threshold": -1, "input_schema": {"type": "object"}}]});
    assert_eq!(
        Registry::from_value(&bad).unwrap_err().path,
        "tools[0].approval_threshold"
    );
}

#[test]
fn the_agent_holds_a_call_that_needs_approval_and_ends_the_turn_after_its_round() {
    let registry = Registry::builtin();
    let resolution = registry.resolve("streams", None, None);
    let mut agent = Agent::new(&resolution, AgentLimits::default())
        .with_defaults(vec!["openai".into(), "anthropic".into()], "openai".into());
    assert_eq!(agent.start(), Step::CallModel { answer_now: false });
    let calls = vec![
        call("c1", "start_research", json!({"prompt": "EGFR resistance"})),
        call("c2", "start_research", json!({"prompt": "Again"})),
        call("c3", "list_research", json!({})),
    ];
    let Step::RunTools(runs) = agent.model_answered("I'll start it.", calls) else {
        panic!("the call needing no approval runs");
    };
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].tool, "list_research");
    let held = agent.held().unwrap().clone();
    assert_eq!(held.tool, "start_research");
    assert_eq!(held.call_id, "c1");
    assert_eq!(
        held.arguments,
        json!({"prompt": "EGFR resistance", "providers": ["openai", "anthropic"], "synthesis_provider": "openai"})
    );
    assert_eq!(held.estimated_calls, 4);
    assert!(
        held.summary.contains("2 providers (openai, anthropic)"),
        "{}",
        held.summary
    );
    let done = agent.tool_finished(
        runs[0].index,
        stepwise_core::agent::ToolOutcome::Done {
            text: "no jobs".into(),
            payload: None,
        },
    );
    assert_eq!(
        done,
        Some(Step::Done),
        "no model call after a held call's round"
    );
    let history = agent.tool_history().to_vec();
    assert_eq!(
        history[0].output,
        "waiting for the user's approval; it has not run"
    );
    assert!(history[1].is_error && history[1].output.contains("one at a time"));
    let answer = finish(&resolution, MarkerParser::new().finish(), agent);
    assert_eq!(answer.approval.unwrap().call_id, "c1");
}

#[test]
fn a_held_call_with_no_text_gets_a_sentence_saying_what_it_would_do() {
    let registry = Registry::builtin();
    let resolution = registry.resolve("streams", None, None);
    let mut agent = Agent::new(&resolution, AgentLimits::default());
    agent.start();
    let args = json!({"stream_id": "s1", "name": "EGFR watch"});
    let step = agent.model_answered("", vec![call("c1", "update_stream_settings", args)]);
    assert_eq!(step, Step::Done);
    let answer = finish(&resolution, MarkerParser::new().finish(), agent);
    assert_eq!(
        answer.message,
        "I'd like to do this, with your approval: Change the settings of stream s1: name to \"EGFR watch\"."
    );
    // Invalid arguments are refused as before: nothing is held.
    let mut agent = Agent::new(&resolution, AgentLimits::default());
    agent.start();
    let step = agent.model_answered("", vec![call("c1", "update_stream_settings", json!({}))]);
    assert_eq!(step, Step::CallModel { answer_now: false });
    assert!(agent.held().is_none());
}

#[test]
fn an_approval_is_decided_once_edits_are_checked_and_the_deadline_expires_it() {
    let schema = research_schema();
    let args = json!({"prompt": "EGFR", "providers": ["a"]});
    // Approved as proposed.
    let mut approval = issued(args.clone(), 0);
    approval.approve(None, "owner", 10).unwrap();
    assert_eq!(approval.state, ApprovalState::Approved);
    assert_eq!(approval.arguments_to_run(), &args);
    assert_eq!(
        approval.approve(None, "owner", 11),
        Err(ApprovalError::Settled("approved"))
    );
    assert_eq!(
        approval.deny("no", "owner", 11),
        Err(ApprovalError::Settled("approved"))
    );
    approval.record_result("Started job j1.", false).unwrap();
    assert_eq!(
        approval.record_result("again", false),
        Err(ApprovalError::Settled("run"))
    );
    // Edited: checked against the schema; the same arguments are no edit.
    let mut approval = issued(args.clone(), 0);
    let bad = json!({"prompt": "", "providers": ["a"]});
    let refused = approval.check_edit(Some(&bad), &schema).unwrap_err();
    assert_eq!(refused.code(), "invalid_arguments");
    assert!(refused.to_string().contains("$.prompt"), "{refused}");
    assert_eq!(approval.state, ApprovalState::Pending, "nothing changed");
    approval.check_edit(Some(&args), &schema).unwrap();
    approval.approve(Some(&args), "owner", 10).unwrap();
    assert_eq!(approval.edited_arguments, None);
    let mut approval = issued(args.clone(), 0);
    let edited = json!({"prompt": "EGFR in NSCLC", "providers": ["a"]});
    approval.check_edit(Some(&edited), &schema).unwrap();
    approval.approve(Some(&edited), "owner", 10).unwrap();
    assert_eq!(approval.arguments_to_run(), &edited);
    // Denied with a reason (trimmed; a blank one says so; a long one refused).
    let mut approval = issued(args.clone(), 0);
    assert_eq!(
        approval.deny(&"x".repeat(501), "owner", 5),
        Err(ApprovalError::ReasonTooLong)
    );
    approval.deny("  too costly ", "owner", 5).unwrap();
    assert_eq!(approval.reason.as_deref(), Some("too costly"));
    assert!(
        approval
            .history_line()
            .ends_with("denied by the user, who said: too costly")
    );
    let mut approval = issued(args.clone(), 0);
    approval.deny(" ", "owner", 5).unwrap();
    assert_eq!(approval.reason.as_deref(), Some("no reason given"));
    // Expired at its deadline: a late decision is refused.
    let mut approval = issued(args, 0);
    assert!(!approval.expire_if_due(TTL - 1));
    assert_eq!(
        approval.approve(None, "owner", TTL),
        Err(ApprovalError::Expired)
    );
    assert_eq!(approval.state, ApprovalState::Expired);
    assert_eq!(approval.reason.as_deref(), Some("expired"));
    assert!(!approval.expire_if_due(TTL + 1), "once");
}

/// A conversation whose one answer holds approval `a1`, issued at 0.
fn conversation_with_approval() -> Conversation {
    let begin = Command::BeginAssistant {
        message: "Start research on EGFR".into(),
        start: true,
        lease_ms: LEASE,
    };
    let first = handle(None, "c1", "o1", &begin, 0).unwrap();
    let record = first.record.unwrap();
    let Reply::Begun { lease, .. } = first.reply else {
        panic!()
    };
    let mut answer = Entry::user("I'll start it.", 1, None);
    answer.role = Role::Assistant;
    answer.approval = Some(issued(json!({"prompt": "EGFR", "providers": ["a"]}), 0));
    let commit = Command::CommitAssistant {
        lease,
        entries: vec![Entry::user("Start research on EGFR", 0, None), answer],
        resumed: None,
        requests: Vec::new(),
        writing_style: None,
    };
    handle(Some(&record), "c1", "o1", &commit, 2)
        .unwrap()
        .record
        .unwrap()
}

/// The owner approves `approval_id` as proposed.
fn approving(approval_id: &str) -> Command {
    Command::BeginApproved {
        approval_id: approval_id.into(),
        arguments: None,
        by: "owner".into(),
        lease_ms: LEASE,
    }
}

fn approval_of(record: &Conversation) -> &Approval {
    record.entries[1].approval.as_ref().unwrap()
}

#[test]
fn approving_begins_the_turn_that_runs_it_and_a_second_click_or_retry_finds_it_settled() {
    let record = conversation_with_approval();
    assert_eq!(
        record.next_wake(u64::MAX / 2),
        TTL / 2,
        "the alarm wakes to remind the owner half way"
    );
    let approve = approving("a1");
    // A stranger does not see it; an unknown id is not found.
    assert_eq!(
        handle(Some(&record), "c1", "o2", &approve, 10).unwrap_err(),
        ConversationError::NotFound
    );
    let unknown = approving("nope");
    let refused = handle(Some(&record), "c1", "o1", &unknown, 10).unwrap_err();
    assert_eq!(refused.code(), "approval_not_found");
    let handled = handle(Some(&record), "c1", "o1", &approve, 10).unwrap();
    let Reply::Begun { lease, .. } = handled.reply else {
        panic!("a turn begins")
    };
    let ConversationEvent::Approval {
        message, approval, ..
    } = &handled.events[0]
    else {
        panic!("watchers are told")
    };
    assert_eq!((*message, approval.state), (1, ApprovalState::Approved));
    let running = handled.record.unwrap();
    assert!(running.running.is_some());
    // The second tab's click, while the turn runs and after it: settled, never run again.
    let again = handle(Some(&running), "c1", "o1", &approve, 11).unwrap_err();
    assert_eq!(again.code(), "turn_in_progress");
    let ran = Command::ApprovalRan {
        approval_id: "a1".into(),
        lease,
        output: "Started research job j1.".into(),
        is_error: false,
    };
    let after = handle(Some(&running), "c1", "o1", &ran, 12)
        .unwrap()
        .record
        .unwrap();
    assert_eq!(
        approval_of(&after).result.as_ref().unwrap().output,
        "Started research job j1."
    );
    let abort = Command::Abort { lease };
    let idle = handle(Some(&after), "c1", "o1", &abort, 13)
        .unwrap()
        .record
        .unwrap();
    assert_eq!(
        approval_of(&idle).state,
        ApprovalState::Approved,
        "a failed turn keeps it"
    );
    let retry = handle(Some(&idle), "c1", "o1", &approve, 14).unwrap_err();
    assert_eq!(
        retry,
        ConversationError::Approval(ApprovalError::Settled("approved"))
    );
    assert_eq!(retry.code(), "approval_settled");
    // The model reads that it ran.
    let history = model_history(&idle.entries, 10_000);
    assert!(
        history[1].content.ends_with("approved by the user; it ran"),
        "{history:?}"
    );
    assert_eq!(
        idle.next_wake(1_000_000),
        idle.updated_at + 1_000_000,
        "nothing pending"
    );
}

#[test]
fn a_denial_is_kept_with_its_reason_and_an_unanswered_approval_expires_at_the_alarm() {
    let record = conversation_with_approval();
    let deny = Command::DenyApproval {
        approval_id: "a1".into(),
        reason: "Not now".into(),
        by: "owner".into(),
    };
    let denied = handle(Some(&record), "c1", "o1", &deny, 10)
        .unwrap()
        .record
        .unwrap();
    assert_eq!(approval_of(&denied).state, ApprovalState::Denied);
    let approve = approving("a1");
    let refused = handle(Some(&denied), "c1", "o1", &approve, 11).unwrap_err();
    assert_eq!(refused.code(), "approval_settled");
    let history = model_history(&denied.entries, 10_000);
    assert!(
        history[1]
            .content
            .contains("denied by the user, who said: Not now")
    );
    // Nobody answers: the alarm reminds half way, then expires it at the deadline, telling the
    // watchers each time.
    let early = handle(Some(&record), "c1", "o1", &Command::Tick, TTL / 2 - 1).unwrap();
    assert!(early.record.is_none() && early.events.is_empty());
    let reminded = handle(Some(&record), "c1", "o1", &Command::Tick, TTL / 2).unwrap();
    let reminded = reminded.record.unwrap();
    assert!(approval_of(&reminded).reminded && approval_of(&reminded).is_pending());
    assert_eq!(
        reminded.next_wake(u64::MAX / 2),
        TTL,
        "then at the deadline"
    );
    let ticked = handle(Some(&reminded), "c1", "o1", &Command::Tick, TTL).unwrap();
    assert!(matches!(ticked.reply, Reply::Ticked { fallback: None }));
    let expired = ticked.record.unwrap();
    assert_eq!(approval_of(&expired).state, ApprovalState::Expired);
    assert!(matches!(
        ticked.events[0],
        ConversationEvent::Approval { .. }
    ));
    // A decision after the deadline, before the alarm: refused, nothing changed.
    let late = handle(Some(&record), "c1", "o1", &approve, TTL + 5).unwrap_err();
    assert_eq!(late.code(), "approval_expired");
    let late = handle(Some(&record), "c1", "o1", &deny, TTL + 5).unwrap_err();
    assert_eq!(late.code(), "approval_expired");
}

/// The approval vectors (`tests/vectors/approvals.json`): each step a command at a time, with
/// the error it gets or the reply, the approval's state, whether the record changed and the
/// events the watchers get.
#[test]
fn approvals_follow_their_vectors() {
    let file = common::vectors("approvals.json");
    for case in file["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let mut record = conversation_with_approval();
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let at = step["at"].as_u64().unwrap();
            let owner = step["owner"].as_str().unwrap_or("o1");
            let command: Command = serde_json::from_value(step["command"].clone())
                .unwrap_or_else(|e| panic!("{name} #{i}: command: {e}"));
            let handled = handle(Some(&record), "c1", owner, &command, at);
            if let Some(code) = step["error"].as_str() {
                let error = handled.expect_err(&format!("{name} #{i}: refused"));
                assert_eq!(error.code(), code, "{name} #{i}: {error}");
                continue;
            }
            let handled = handled.unwrap_or_else(|e| panic!("{name} #{i}: {e}"));
            let reply = match &handled.reply {
                Reply::Begun { .. } => "begun",
                Reply::Conversation(_) => "conversation",
                Reply::Ticked { .. } => "ticked",
                Reply::Aborted => "aborted",
                other => panic!("{name} #{i}: {other:?}"),
            };
            assert_eq!(reply, step["reply"], "{name} #{i}: reply");
            assert_eq!(
                handled.record.is_some(),
                step["changed"],
                "{name} #{i}: changed"
            );
            let events: Vec<Value> = handled
                .events
                .iter()
                .map(|e| serde_json::to_value(e).unwrap()["type"].clone())
                .collect();
            assert_eq!(Value::from(events), step["events"], "{name} #{i}: events");
            if let Some(next) = handled.record {
                record = next;
            }
            let approval = approval_of(&record);
            assert_eq!(approval.state.as_str(), step["state"], "{name} #{i}: state");
            if let Some(reason) = step.get("reason") {
                assert_eq!(approval.reason.as_deref(), reason.as_str(), "{name} #{i}");
            }
            if let Some(edited) = step.get("edited") {
                assert_eq!(
                    approval.edited_arguments.as_ref().unwrap_or(&Value::Null),
                    edited,
                    "{name} #{i}"
                );
            }
            if let Some(reminded) = step.get("reminded") {
                assert_eq!(
                    Value::from(approval.reminded),
                    *reminded,
                    "{name} #{i}: reminded"
                );
            }
            if let Some(result) = step.get("result") {
                let kept = approval.result.as_ref().map(|r| r.output.as_str());
                assert_eq!(kept, result.as_str(), "{name} #{i}: result");
            }
        }
    }
}

#[test]
fn a_seeded_round_is_the_first_of_the_history_and_the_turn_s_own_calls_follow_it() {
    let registry = Registry::builtin();
    let resolution = registry.resolve("research", None, None);
    let mut agent = Agent::new(&resolution, AgentLimits::default());
    agent.seed(stepwise_core::llm::Round {
        text: String::new(),
        calls: vec![call("c1", "start_research", json!({"prompt": "x"}))],
        replies: vec![stepwise_core::llm::ToolReply {
            call_id: "c1".into(),
            name: "start_research".into(),
            content: "Started research job j1.".into(),
            is_error: false,
        }],
    });
    assert_eq!(agent.start(), Step::CallModel { answer_now: false });
    assert_eq!(
        agent.rounds().len(),
        1,
        "the model reads the approved call and its result"
    );
    let Step::RunTools(runs) =
        agent.model_answered("", vec![call("c2", "list_research", json!({}))])
    else {
        panic!("the follow-up call runs");
    };
    assert_eq!(runs[0].index, 1, "numbered after the approved call");
    let history = agent.tool_history();
    assert_eq!(
        (history[0].tool_name.as_str(), history[0].output.as_str()),
        ("start_research", "Started research job j1.")
    );
    // over_cost is judged on the arguments as they would run: every configured provider.
    let custom = json!({"tools": [{
        "name": "start_research", "description": "d", "approval": "over_cost", "approval_threshold": 2,
        "input_schema": {"type": "object"}
    }], "pages": [{"page": "p", "tools": ["start_research"]}]});
    let registry = Registry::from_value(&custom).unwrap();
    let resolution = registry.resolve("p", None, None);
    let mut agent = Agent::new(&resolution, AgentLimits::default())
        .with_defaults(vec!["a".into(), "b".into(), "c".into()], "a".into());
    agent.start();
    let step = agent.model_answered(
        "",
        vec![call("c1", "start_research", json!({"prompt": "x"}))],
    );
    assert_eq!(
        step,
        Step::Done,
        "three providers, a synthesis and a title: held"
    );
    assert_eq!(agent.held().unwrap().estimated_calls, 5);
}

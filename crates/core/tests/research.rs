//! Replays `tests/vectors/research.json`: every row of the research-lifecycle tables, claims,
//! draft edits and titles, owners, sharing, deletion and expiry as scenarios of commands given
//! to `research::handle`, checking statuses, errors and effects; plus the texts.

mod common;

use common::vectors;
use serde_json::Value;
use stepwise_core::llm::ErrorCode;
use stepwise_core::research::{
    CallTask, Caller, Command, ConfirmAction, DraftFields, Effect, ExternalReport, Lifetimes,
    LlmStatus, ProviderOutcome, Research, ResearchError, fallback_title, handle, read,
    synthesis_prompt,
};

const OWNER: &str = "o1";

fn effects_summary(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::CallProvider { provider, attempt } => {
                Some(format!("call_provider:{provider}:{attempt}"))
            }
            Effect::RunSynthesis { attempt } => Some(format!("run_synthesis:{attempt}")),
            Effect::MakeCall {
                task,
                provider,
                attempt,
                ..
            } => Some(format!("make_call:{}:{provider}:{attempt}", name(task))),
            Effect::WriteSharePage => Some("write_share_page".into()),
            Effect::DeleteSharePage { share_id } => Some(format!("delete_share_page:{share_id}")),
            Effect::Erase { .. } => Some("erase".into()),
            Effect::Emit(_) | Effect::Index => None,
        })
        .collect()
}

fn name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

fn outcome(step: &Value) -> ProviderOutcome {
    match step.get("fail") {
        Some(code) => {
            ProviderOutcome::failed(serde_json::from_value(code.clone()).unwrap(), "boom")
        }
        None => ProviderOutcome::Completed {
            text: "report".into(),
        },
    }
}

/// A draft's fields as the edge builds them, from a step's fields over defaults.
fn fields(step: &Value) -> DraftFields {
    let selected = step.get("selected_llms").map_or(vec!["a".to_owned()], |s| {
        serde_json::from_value(s.clone()).unwrap()
    });
    let prompt = step.get("prompt").and_then(Value::as_str).unwrap_or("P");
    DraftFields {
        title: "T".into(),
        prompt: prompt.into(),
        selected_llms: selected,
        synthesis_llm: "s".into(),
        external_reports: Vec::new(),
        stream_id: None,
    }
}

fn lifetimes(step: &Value) -> Lifetimes {
    let ms = |key: &str, default: u64| step.get(key).and_then(Value::as_u64).unwrap_or(default);
    Lifetimes {
        call_timeout_ms: ms("timeout", 300_000),
        draft_ttl_ms: ms("draft_ttl", u64::MAX / 4),
        retention_ms: ms("retention", u64::MAX / 4),
    }
}

/// The command a vector step stands for, and who gives it.
fn command(step: &Value, configured: &[String], now: u64) -> (Caller, Command) {
    let attempt = step.get("attempt").and_then(Value::as_u64).unwrap_or(1) as u32;
    let provider = step
        .get("provider")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let owner = Caller::Owner(OWNER.into());
    let (default, command) = match step["op"].as_str().unwrap() {
        "finish" => (
            Caller::System,
            Command::CallFinished {
                provider,
                attempt,
                outcome: outcome(step),
            },
        ),
        "claim" => (
            Caller::System,
            Command::Claim {
                task: serde_json::from_value::<CallTask>(step["task"].clone()).unwrap(),
                provider,
                attempt,
            },
        ),
        "synthesis" => (
            Caller::System,
            Command::SynthesisFinished {
                attempt,
                outcome: outcome(step),
            },
        ),
        "alarm" => (
            Caller::System,
            Command::Timeout {
                lifetimes: lifetimes(step),
            },
        ),
        "import" => {
            let record = step.get("record").cloned().unwrap_or(Value::Null);
            let research = serde_json::from_value(record).unwrap_or_else(|_| draft(step, now));
            (
                Caller::Admin,
                Command::Import {
                    research: Box::new(research),
                },
            )
        }
        "confirm" => (
            owner,
            Command::Confirm {
                action: serde_json::from_value::<ConfirmAction>(step["action"].clone()).unwrap(),
            },
        ),
        "retry" => (owner, Command::Retry),
        "start" => (
            owner,
            Command::Start {
                configured: configured.to_vec(),
            },
        ),
        "edit" => (
            owner,
            Command::EditDraft {
                fields: fields(step),
            },
        ),
        "title" => (
            owner,
            Command::SetTitle {
                title: step["title"].as_str().unwrap().to_owned(),
            },
        ),
        "create" => (
            owner,
            Command::Create {
                research: Box::new(draft(step, now)),
            },
        ),
        "share" => (
            owner,
            Command::Share {
                share_id: step["share_id"].as_str().unwrap().to_owned(),
                base_url: "https://stepwise.test".into(),
                ttl_ms: step["ttl"].as_u64().unwrap(),
            },
        ),
        "unshare" => (owner, Command::Unshare),
        "delete" => (owner, Command::Delete),
        op => panic!("unknown op {op}"),
    };
    let caller = match step.get("caller").and_then(Value::as_str) {
        None => default,
        Some("owner") => Caller::Owner(OWNER.into()),
        Some("other") => Caller::Owner("o2".into()),
        Some("system") => Caller::System,
        Some("admin") => Caller::Admin,
        Some(other) => panic!("unknown caller {other}"),
    };
    (caller, command)
}

fn draft(step: &Value, now: u64) -> Research {
    Research::draft("r1".into(), OWNER.into(), fields(step), now).unwrap()
}

/// Checks the keys a step and a case's final expectation share: status, error, effects.
fn check_common(job: Option<&Research>, expect: &Value, last_effects: &[Effect], at: &str) {
    if let Some(status) = expect.get("status") {
        assert_eq!(name(&job.expect("a job").status), *status, "{at}: status");
    }
    if let Some(error) = expect.get("error") {
        assert_eq!(job.unwrap().error.as_deref(), error.as_str(), "{at}: error");
    }
    if let Some(effects) = expect.get("effects") {
        assert_eq!(
            serde_json::to_value(effects_summary(last_effects)).unwrap(),
            *effects,
            "{at}: effects"
        );
    }
    if let Some(index) = expect.get("index") {
        assert_eq!(
            last_effects.contains(&Effect::Index),
            index.as_bool().unwrap(),
            "{at}: index write"
        );
    }
}

/// The job a case starts from: none, a loaded record, or a draft started at time 0.
fn initial(case: &Value, configured: &[String]) -> Option<Research> {
    if case.get("no_record").is_some() {
        return None;
    }
    if let Some(state) = case.get("state") {
        return Some(serde_json::from_value(state.clone()).unwrap());
    }
    let start = &case["start"];
    let reports = (0..start["external_reports"].as_u64().unwrap())
        .map(|i| ExternalReport {
            title: format!("X{i}"),
            content: "ctx".into(),
        })
        .collect();
    let fields = DraftFields {
        title: "T".into(),
        prompt: "P".into(),
        selected_llms: serde_json::from_value(start["selected_llms"].clone()).unwrap(),
        synthesis_llm: "s".into(),
        external_reports: reports,
        stream_id: None,
    };
    let mut record = Some(Research::draft("r1".into(), OWNER.into(), fields, 0).unwrap());
    let start = Command::Start {
        configured: configured.to_vec(),
    };
    handle(&mut record, &Caller::Owner(OWNER.into()), start, 0).unwrap();
    record
}

#[test]
fn research_vectors_follow_every_table_row_of_the_spec() {
    let file = vectors("research.json");
    let configured: Vec<String> = serde_json::from_value(file["configured"].clone()).unwrap();
    for case in file["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        assert!(
            case.get("e2e").is_some(),
            "{name}: say how the e2e suite replays it"
        );
        let mut record = initial(case, &configured);
        let mut last = Vec::new();
        for (index, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let now = step.get("now").and_then(Value::as_u64).unwrap_or(10);
            let at = format!("{name}, step {index}");
            let before = record.clone();
            let (caller, command) = command(step, &configured, now);
            match (
                handle(&mut record, &caller, command, now),
                step.get("expect_error"),
            ) {
                (Ok(handled), None) => {
                    assert_eq!(handled.changed, record != before, "{at}: changed");
                    last = handled.effects;
                }
                (Err(error), Some(code)) => {
                    assert_eq!(error.code(), code.as_str().unwrap(), "{at}");
                    assert_eq!(record, before, "{at}: a refused command changed the job");
                    last = Vec::new();
                }
                (Ok(_), Some(code)) => panic!("{at}: expected error {code}"),
                (Err(error), None) => panic!("{at}: unexpected error {error}"),
            }
            check_common(record.as_ref(), step, &last, &at);
        }
        let expect = &case["expect"];
        if expect.get("deleted").is_some() {
            assert_eq!(record, None, "{name}: the job should be gone");
            continue;
        }
        assert!(
            expect.get("status").is_some(),
            "{name}: a case must state the final status"
        );
        check_common(record.as_ref(), expect, &last, name);
        let job = record.as_ref().unwrap();
        let owner = Caller::Owner(OWNER.into());
        assert!(read(&record, &owner).is_ok(), "{name}: the owner reads");
        let other = Caller::Owner("o2".into());
        assert_eq!(
            read(&record, &other).unwrap_err().code(),
            "not_found",
            "{name}"
        );
        check_job(job, expect, name);
    }
}

/// Checks a case's final expectations about the job's fields.
fn check_job(job: &Research, expect: &Value, name: &str) {
    let result = |provider: &str| {
        job.llm_results
            .iter()
            .find(|r| r.provider == provider)
            .unwrap()
    };
    for (provider, status) in expect
        .get("llm")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        assert_eq!(
            serde_json::to_value(result(provider).status).unwrap(),
            *status,
            "{name}: {provider}"
        );
    }
    for (provider, code) in expect
        .get("llm_errors")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let error = result(provider).error.as_ref().map(|e| e.code);
        let code: ErrorCode = serde_json::from_value(code.clone()).unwrap();
        assert_eq!(
            (result(provider).status, error),
            (LlmStatus::Failed, Some(code)),
            "{name}: {provider}"
        );
    }
    if let Some(failed) = expect.get("partial_failure") {
        let partial = job.partial_failure.as_ref().expect("a partial failure");
        assert_eq!(
            serde_json::to_value(&partial.failed_providers).unwrap(),
            *failed,
            "{name}"
        );
    }
    let fields = serde_json::to_value(job.view()).unwrap();
    for key in [
        "retry_count",
        "synthesis_not_available",
        "prompt",
        "title",
        "created_at",
        "selected_llms",
    ] {
        if let Some(value) = expect.get(key) {
            assert_eq!(&fields[key], value, "{name}: {key}");
        }
    }
    if let Some(claimed) = expect.get("synthesis_claimed") {
        assert_eq!(
            u64::from(job.synthesis_claimed),
            claimed.as_u64().unwrap(),
            "{name}: synthesis_claimed"
        );
    }
    if let Some(share_id) = expect.get("share_id") {
        let shared = job.share_info.as_ref().map(|s| s.share_id.as_str());
        assert_eq!(shared, share_id.as_str(), "{name}: share id");
    }
    if let Some(at) = expect.get("share_expires_at") {
        let expires = job.share_info.as_ref().map(|s| s.expires_at);
        assert_eq!(expires, at.as_u64(), "{name}: share expiry");
    }
    if let Some(synthesized) = expect.get("synthesized") {
        assert_eq!(
            job.synthesized_result.is_some(),
            synthesized.as_bool().unwrap(),
            "{name}: synthesized"
        );
    }
    if let Some(deadline) = expect.get("next_deadline") {
        let lifetimes = Lifetimes {
            call_timeout_ms: 300_000,
            ..Lifetimes::default()
        };
        assert_eq!(
            job.next_deadline(&lifetimes),
            deadline.as_u64(),
            "{name}: next deadline"
        );
    }
}

#[test]
fn drafts_are_validated() {
    let draft = |prompt: &str, selected: Vec<&str>| {
        let fields = DraftFields {
            title: "t".into(),
            prompt: prompt.into(),
            selected_llms: selected.into_iter().map(String::from).collect(),
            synthesis_llm: "s".into(),
            external_reports: Vec::new(),
            stream_id: None,
        };
        Research::draft("r".into(), OWNER.into(), fields, 0)
    };
    assert_eq!(draft("  ", vec!["a"]).unwrap_err().code(), "invalid_draft");
    assert_eq!(
        draft(&"x".repeat(20_001), vec!["a"]).unwrap_err().code(),
        "invalid_draft"
    );
    assert_eq!(
        draft("P", vec!["a", "a"]).unwrap_err().code(),
        "invalid_draft"
    );
    assert!(
        draft("P", vec![]).is_ok(),
        "an empty selection is refused at start, not at draft"
    );
}

#[test]
fn the_synthesis_prompt_labels_every_source() {
    let reports = vec![ExternalReport {
        title: "Market scan".into(),
        content: "External findings".into(),
    }];
    let selected = vec![
        "openai".to_owned(),
        "claude".to_owned(),
        "gemini".to_owned(),
    ];
    let fields = DraftFields {
        title: "t".into(),
        prompt: "Compare X".into(),
        selected_llms: selected.clone(),
        synthesis_llm: "gemini".into(),
        external_reports: reports,
        stream_id: None,
    };
    let job = Research::draft("r".into(), OWNER.into(), fields, 0).unwrap();
    let mut record = Some(job);
    let owner = Caller::Owner(OWNER.into());
    handle(
        &mut record,
        &owner,
        Command::Start {
            configured: selected,
        },
        1,
    )
    .unwrap();
    let finished = |provider: &str, outcome| Command::CallFinished {
        provider: provider.into(),
        attempt: 1,
        outcome,
    };
    let report = |text: &str| ProviderOutcome::Completed { text: text.into() };
    let mut apply = |command| handle(&mut record, &Caller::System, command, 1).unwrap();
    apply(finished("openai", report("OpenAI view")));
    apply(finished(
        "claude",
        ProviderOutcome::failed(ErrorCode::Auth, "bad key"),
    ));
    apply(finished("gemini", report("Gemini view")));
    let prompt = synthesis_prompt(record.as_ref().unwrap());
    assert!(prompt.contains("Question:\nCompare X"));
    assert!(prompt.contains("=== Source 1: openai (model report) ===\nOpenAI view"));
    assert!(prompt.contains("=== Source 2: gemini (model report) ===\nGemini view"));
    assert!(
        prompt.contains("=== Source 3: external report \"Market scan\" ===\nExternal findings")
    );
    assert!(
        !prompt.contains("claude"),
        "failed providers are not sources"
    );
}

#[test]
fn a_synthesis_prompt_cuts_long_sources_to_fair_shares() {
    let long = "x".repeat(300_000);
    let fields = DraftFields {
        title: "t".into(),
        prompt: "Q".into(),
        selected_llms: vec!["a".into(), "b".into()],
        synthesis_llm: "a".into(),
        external_reports: vec![ExternalReport {
            title: "short".into(),
            content: "tiny".into(),
        }],
        stream_id: None,
    };
    let mut record = Some(Research::draft("r".into(), OWNER.into(), fields, 0).unwrap());
    let configured = vec!["a".to_owned(), "b".to_owned()];
    handle(
        &mut record,
        &Caller::Owner(OWNER.into()),
        Command::Start { configured },
        1,
    )
    .unwrap();
    for provider in ["a", "b"] {
        let done = Command::CallFinished {
            provider: provider.into(),
            attempt: 1,
            outcome: ProviderOutcome::Completed { text: long.clone() },
        };
        handle(&mut record, &Caller::System, done, 2).unwrap();
    }
    let prompt = synthesis_prompt(record.as_ref().unwrap());
    assert!(prompt.contains("=== Source 3: external report \"short\" ===\ntiny\n"));
    assert_eq!(prompt.matches("[… cut to fit the synthesis]").count(), 2);
    // The two long reports split what the short one left: (200000 - 4) / 2 characters each.
    let kept = format!("\n{}\n[… cut", "x".repeat(99_998));
    assert_eq!(prompt.matches(&kept).count(), 2);
    assert!(!prompt.contains(&"x".repeat(99_999)));
}

#[test]
fn fallback_titles_are_short_and_never_empty() {
    assert_eq!(fallback_title(""), "Untitled research");
    let long = fallback_title(
        "A very long research question about the competitive landscape of oncology drugs in Europe",
    );
    assert!(long.ends_with('…') && long.chars().count() <= 60, "{long}");
}

#[test]
fn a_paid_start_runs_only_the_calls_paid_for() {
    let fields = |providers: &[&str]| DraftFields {
        title: "t".into(),
        prompt: "Q".into(),
        selected_llms: providers.iter().map(|p| (*p).to_owned()).collect(),
        synthesis_llm: "s".into(),
        external_reports: vec![],
        stream_id: None,
    };
    let owner = Caller::Owner(OWNER.into());
    let configured: Vec<String> = ["a", "b", "c", "d", "s"].map(String::from).to_vec();
    let start = Command::Start { configured };
    let mut record =
        Some(Research::draft("r".into(), OWNER.into(), fields(&["a", "b"]), 0).unwrap());
    // What the edge reads and charges for.
    let calls_of = |record: &Option<Research>| -> Vec<String> {
        let calls = record.as_ref().unwrap().calls_for(&start);
        calls.into_iter().map(String::from).collect()
    };
    // Read and charged: a, b and the synthesis. Then the draft is edited to four providers.
    let paid = calls_of(&record);
    assert_eq!(paid, ["a", "b", "s"]);
    let edit = Command::EditDraft {
        fields: fields(&["a", "b", "c", "d"]),
    };
    handle(&mut record, &owner, edit, 1).unwrap();
    let before = record.clone();
    let stale = Command::Paid {
        command: Box::new(start.clone()),
        calls: paid,
    };
    let refused = handle(&mut record, &owner, stale, 2).unwrap_err();
    assert_eq!(
        (refused.code(), refused),
        ("job_changed", ResearchError::Changed)
    );
    assert_eq!(record, before, "a refused command changes nothing");
    // Charged on a fresh read, it runs, with exactly the calls paid for.
    let paid = calls_of(&record);
    let fresh = Command::Paid {
        command: Box::new(start),
        calls: paid.clone(),
    };
    let handled = handle(&mut record, &owner, fresh, 3).unwrap();
    let called: Vec<&str> = handled
        .effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::CallProvider { provider, .. } => Some(provider.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(called, ["a", "b", "c", "d"]);
    assert_eq!(paid, ["a", "b", "c", "d", "s"]);
    // A stranger's paid command is not found, as any other command of theirs.
    let stranger = Caller::Owner("someone else".into());
    let retry = Command::Paid {
        command: Box::new(Command::Retry),
        calls: vec![],
    };
    assert_eq!(
        handle(&mut record, &stranger, retry, 4).unwrap_err(),
        ResearchError::NotFound
    );
}

//! Replays `tests/vectors/research.json`: every row of the research-lifecycle tables, claims,
//! draft edits and publishing as scenarios of commands given to `research::handle`, checking
//! statuses, errors and effects; plus the texts.

mod common;

use common::vectors;
use serde_json::Value;
use stepwise_core::llm::ErrorCode;
use stepwise_core::research::{
    CallTask, Command, ConfirmAction, Effect, ExternalReport, LlmStatus, ProviderOutcome, Research,
    fallback_title, handle, synthesis_prompt,
};

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
            Effect::Publish => Some("publish".into()),
            Effect::WriteSharePage => Some("write_share_page".into()),
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

/// A draft as the edge builds one, from a step's fields over the case's defaults.
fn draft(step: &Value, now: u64) -> Research {
    let selected = step.get("selected_llms").map_or(vec!["a".to_owned()], |s| {
        serde_json::from_value(s.clone()).unwrap()
    });
    let prompt = step.get("prompt").and_then(Value::as_str).unwrap_or("P");
    Research::draft(
        "r1".into(),
        "T".into(),
        prompt.into(),
        selected,
        "s".into(),
        Vec::new(),
        now,
    )
    .unwrap()
}

/// The command a vector step stands for.
fn command(step: &Value, configured: &[String], now: u64) -> Command {
    let attempt = step.get("attempt").and_then(Value::as_u64).unwrap_or(1) as u32;
    let provider = step
        .get("provider")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match step["op"].as_str().unwrap() {
        "finish" => Command::CallFinished {
            provider,
            attempt,
            outcome: outcome(step),
        },
        "claim" => Command::Claim {
            task: serde_json::from_value::<CallTask>(step["task"].clone()).unwrap(),
            provider,
            attempt,
        },
        "synthesis" => Command::SynthesisFinished {
            attempt,
            outcome: outcome(step),
        },
        "confirm" => Command::Confirm {
            action: serde_json::from_value::<ConfirmAction>(step["action"].clone()).unwrap(),
        },
        "retry" => Command::Retry,
        "start" => Command::Start {
            configured: configured.to_vec(),
        },
        "alarm" => Command::Timeout {
            timeout_ms: step["timeout"].as_u64().unwrap(),
        },
        "edit" => Command::EditDraft {
            draft: Box::new(draft(step, now)),
        },
        "create" => Command::Create {
            research: Box::new(draft(step, now)),
        },
        "publish" => Command::Publish {
            share_id: step["share_id"].as_str().unwrap().to_owned(),
            base_url: "https://stepwise.test".into(),
        },
        op => panic!("unknown op {op}"),
    }
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
            "{at}: index refresh"
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
    let selected = serde_json::from_value(start["selected_llms"].clone()).unwrap();
    let draft = Research::draft(
        "r1".into(),
        "T".into(),
        "P".into(),
        selected,
        "s".into(),
        reports,
        0,
    )
    .unwrap();
    let mut record = Some(draft);
    let start = Command::Start {
        configured: configured.to_vec(),
    };
    handle(&mut record, start, 0).unwrap();
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
            match (
                handle(&mut record, command(step, &configured, now), now),
                step.get("expect_error"),
            ) {
                (Ok(effects), None) => {
                    // A driver saves only when there are effects: a change must come with one.
                    assert!(
                        record == before || !effects.is_empty(),
                        "{at}: the record changed without an effect"
                    );
                    last = effects;
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
        assert!(
            expect.get("status").is_some(),
            "{name}: a case must state the final status"
        );
        check_common(record.as_ref(), expect, &last, name);
        check_job(record.as_ref().unwrap(), expect, name);
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
        let share = job.share_info.as_ref().expect("a share");
        assert_eq!(
            share.share_id,
            share_id.as_str().unwrap(),
            "{name}: share id"
        );
    }
    if let Some(synthesized) = expect.get("synthesized") {
        assert_eq!(
            job.synthesized_result.is_some(),
            synthesized.as_bool().unwrap(),
            "{name}: synthesized"
        );
    }
    if let Some(deadline) = expect.get("next_deadline") {
        assert_eq!(
            job.next_deadline(300_000),
            deadline.as_u64(),
            "{name}: next deadline"
        );
    }
}

#[test]
fn drafts_are_validated() {
    let draft = |prompt: &str, selected: Vec<&str>| {
        let selected = selected.into_iter().map(String::from).collect();
        Research::draft(
            "r".into(),
            "t".into(),
            prompt.into(),
            selected,
            "s".into(),
            Vec::new(),
            0,
        )
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
    let job = Research::draft(
        "r".into(),
        "t".into(),
        "Compare X".into(),
        selected.clone(),
        "gemini".into(),
        reports,
        0,
    )
    .unwrap();
    let mut record = Some(job);
    let mut apply = |command| handle(&mut record, command, 1).unwrap();
    apply(Command::Start {
        configured: selected,
    });
    let finished = |provider: &str, outcome| Command::CallFinished {
        provider: provider.into(),
        attempt: 1,
        outcome,
    };
    let report = |text: &str| ProviderOutcome::Completed { text: text.into() };
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
fn fallback_titles_are_short_and_never_empty() {
    assert_eq!(fallback_title(""), "Untitled research");
    let long = fallback_title(
        "A very long research question about the competitive landscape of oncology drugs in Europe",
    );
    assert!(long.ends_with('…') && long.chars().count() <= 60, "{long}");
}

//! Replays `tests/vectors/research.json`: every row of the research-lifecycle tables as a
//! scenario of transitions, checking statuses, errors and effects; plus the texts.

mod common;

use common::vectors;
use serde_json::Value;
use stepwise_core::research::{
    ConfirmAction, Effect, ExternalReport, LlmStatus, ProviderOutcome, Research, fallback_title,
    synthesis_prompt,
};

fn effects_summary(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::CallProvider { provider, attempt } => {
                Some(format!("call_provider:{provider}:{attempt}"))
            }
            Effect::RunSynthesis { attempt } => Some(format!("run_synthesis:{attempt}")),
            Effect::Publish => Some("publish".into()),
            Effect::Emit(_) => None,
        })
        .collect()
}

fn outcome(step: &Value) -> ProviderOutcome {
    match step.get("fail") {
        Some(code) => ProviderOutcome::Failed {
            code: code.as_str().unwrap().into(),
            message: "boom".into(),
        },
        None => ProviderOutcome::Completed {
            text: "report".into(),
        },
    }
}

/// Checks the keys a step and a case's final expectation share: status, error, effects.
fn check_common(job: &Research, expect: &Value, last_effects: &[Effect], at: &str) {
    if let Some(status) = expect.get("status") {
        assert_eq!(status_name(job), status.as_str().unwrap(), "{at}: status");
    }
    if let Some(error) = expect.get("error") {
        assert_eq!(job.error.as_deref(), error.as_str(), "{at}: error");
    }
    if let Some(effects) = expect.get("effects") {
        assert_eq!(
            serde_json::to_value(effects_summary(last_effects)).unwrap(),
            *effects,
            "{at}: effects"
        );
    }
}

fn status_name(job: &Research) -> String {
    serde_json::to_value(job.status)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn research_vectors_follow_every_table_row_of_the_spec() {
    let file = vectors("research.json");
    let configured: Vec<String> = serde_json::from_value(file["configured"].clone()).unwrap();
    for case in file["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let mut job: Research = match case.get("state") {
            Some(state) => {
                serde_json::from_value(state.clone()).unwrap_or_else(|e| panic!("{name}: {e}"))
            }
            None => {
                let start = &case["start"];
                let reports = (0..start["external_reports"].as_u64().unwrap())
                    .map(|i| ExternalReport {
                        title: format!("X{i}"),
                        content: "ctx".into(),
                    })
                    .collect();
                let selected = serde_json::from_value(start["selected_llms"].clone()).unwrap();
                let mut job = Research::draft(
                    "r1".into(),
                    "T".into(),
                    "P".into(),
                    selected,
                    "s".into(),
                    reports,
                    0,
                )
                .unwrap();
                job.start(&configured, 0).unwrap();
                job
            }
        };
        let mut last = Vec::new();
        for (index, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let now = step.get("now").and_then(Value::as_u64).unwrap_or(10);
            let attempt = step.get("attempt").and_then(Value::as_u64).unwrap_or(1) as u32;
            let provider = step.get("provider").and_then(Value::as_str).unwrap_or("");
            let before = job.clone();
            let result = match step["op"].as_str().unwrap() {
                "finish" => Ok(job.call_finished(provider, attempt, outcome(step), now)),
                "started" => Ok(job.call_started(provider, attempt, now)),
                "synthesis" => Ok(job.synthesis_finished(attempt, outcome(step), now)),
                "confirm" => {
                    let action: ConfirmAction =
                        serde_json::from_value(step["action"].clone()).unwrap();
                    job.confirm(action, now)
                }
                "retry" => job.retry(now),
                "start" => job.start(&configured, now),
                "alarm" => Ok(job.fail_overdue(now, step["timeout"].as_u64().unwrap())),
                op => panic!("{name}: unknown op {op}"),
            };
            let at = format!("{name}, step {index}");
            match (result, step.get("expect_error")) {
                (Ok(effects), None) => last = effects,
                (Err(error), Some(code)) => {
                    assert_eq!(error.code(), code.as_str().unwrap(), "{at}");
                    assert_eq!(job, before, "{at}: a refused request changed the job");
                }
                (Ok(_), Some(code)) => panic!("{at}: expected error {code}"),
                (Err(error), None) => panic!("{at}: unexpected error {error}"),
            }
            check_common(&job, step, &last, &at);
        }
        let expect = &case["expect"];
        assert!(
            expect.get("status").is_some(),
            "{name}: a case must state the final status"
        );
        check_common(&job, expect, &last, name);
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
            let error = result(provider).error.as_ref().map(|e| e.code.as_str());
            assert_eq!(
                (result(provider).status, error),
                (LlmStatus::Failed, code.as_str()),
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
        if let Some(count) = expect.get("retry_count") {
            assert_eq!(
                u64::from(job.retry_count),
                count.as_u64().unwrap(),
                "{name}: retry_count"
            );
        }
        if let Some(synthesized) = expect.get("synthesized") {
            assert_eq!(
                job.synthesized_result.is_some(),
                synthesized.as_bool().unwrap(),
                "{name}: synthesized"
            );
        }
        if let Some(flag) = expect.get("synthesis_not_available") {
            assert_eq!(
                job.shows_synthesis_not_available(),
                flag.as_bool().unwrap(),
                "{name}"
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
    let mut job = Research::draft(
        "r".into(),
        "t".into(),
        "Compare X".into(),
        selected.clone(),
        "gemini".into(),
        reports,
        0,
    )
    .unwrap();
    job.start(&selected, 0).unwrap();
    job.call_finished(
        "openai",
        1,
        ProviderOutcome::Completed {
            text: "OpenAI view".into(),
        },
        1,
    );
    job.call_finished(
        "claude",
        1,
        ProviderOutcome::Failed {
            code: "auth".into(),
            message: "bad key".into(),
        },
        1,
    );
    job.call_finished(
        "gemini",
        1,
        ProviderOutcome::Completed {
            text: "Gemini view".into(),
        },
        1,
    );
    let prompt = synthesis_prompt(&job);
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

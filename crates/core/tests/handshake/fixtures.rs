//! Fixtures of the context-on-request tests: a stream, a completed job, the analyzer's input,
//! a request of note slots and a user's supply.

use stepwise_core::handshake::{
    ContextRequest, Need, NeedsInput, Origin, Sources, Supplier, Supply, Urgency, Wanted,
    build_request, classify,
};
use stepwise_core::research::{DraftFields, LlmResult, LlmStatus, Research, ResearchStatus};
use stepwise_core::streams::SavedStream;
use stepwise_core::workflow::FieldValue;

pub const JOB: &str = "0123456789abcdef0123456789abcdef";
pub const STREAM: &str = "fedcba9876543210fedcba9876543210";
pub const SLA: u64 = 10_000;

pub fn stream() -> SavedStream {
    let mut config = stepwise_core::workflow::Config::new();
    config.insert(
        "purpose".into(),
        FieldValue::Text("Monitor EGFR inhibitor trials.".into()),
    );
    config.insert(
        "business_goals".into(),
        FieldValue::List(vec!["Spot new entrants".into(), "Track pricing".into()]),
    );
    config.insert("stream_type".into(), FieldValue::Text("competitive".into()));
    SavedStream {
        id: STREAM.into(),
        owner: "o1".into(),
        name: "EGFR watch".into(),
        workflow: "research_stream".into(),
        config,
        skipped: Vec::new(),
        chat_instructions: "Contact lead@example.com for access.".into(),
        created_at: 0,
        updated_at: 0,
        conversation_id: None,
    }
}

pub fn job() -> Research {
    let fields = DraftFields {
        title: "EGFR review".into(),
        prompt: "Compare EGFR inhibitors".into(),
        selected_llms: vec!["a".into(), "b".into()],
        synthesis_llm: "a".into(),
        external_reports: Vec::new(),
        stream_id: Some(STREAM.into()),
    };
    let mut job = Research::draft(JOB.into(), "o1".into(), fields, 0).unwrap();
    job.status = ResearchStatus::Completed;
    for (provider, text) in [
        ("a", "Report A with key sk-abcdefghijklmnopqrstuv."),
        ("b", "Report B"),
    ] {
        job.llm_results.push(LlmResult {
            provider: provider.into(),
            status: LlmStatus::Completed,
            attempt: 1,
            dispatched_at: 0,
            result: Some(text.into()),
            error: None,
            finished_at: Some(1),
        });
    }
    job.synthesized_result = Some("Both agree on dosing.".into());
    job.points_of_interest = vec!["Dose escalation".into(), "Pricing".into()];
    job
}

pub fn input<'a>(
    message: &'a str,
    held: &'a [String],
    research: Option<&'a str>,
    candidates: &'a [(String, String)],
) -> NeedsInput<'a> {
    NeedsInput {
        page: "research",
        message,
        class: classify(message),
        active_phase: 3,
        goal: "",
        stream_id: Some(STREAM),
        research_id: research,
        candidates,
        held,
        screen: None,
    }
}

pub fn request_with(urgencies: &[Urgency]) -> ContextRequest {
    let wanted = urgencies
        .iter()
        .enumerate()
        .map(|(i, urgency)| Wanted {
            need: Need {
                phase: 0,
                artifact_type: "note".into(),
                key_path: None,
                size_limit: 100,
                urgency: *urgency,
                description: format!("slot s{}", i + 1),
            },
            key_path: None,
            candidates: Vec::new(),
        })
        .collect();
    build_request(
        "q1",
        "m1",
        Origin::Analyzer,
        wanted,
        &Sources::default(),
        1_000,
        SLA,
    )
}

pub fn supply(text: &str) -> Supply {
    Supply {
        by: Supplier::User,
        at: 2_000,
        key_path: None,
        text: text.into(),
        truncated: false,
    }
}

/// The sources of `stream` and `jobs`, with no literature.
pub fn sources_of<'a>(stream: &'a SavedStream, jobs: &'a [Research]) -> Sources<'a> {
    Sources {
        stream: Some(stream),
        literature: None,
        jobs,
    }
}

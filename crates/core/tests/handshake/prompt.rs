//! The baseline in the spec's order, prompt sheets, and what the owner wrote reaching the
//! prompt redacted and within limits.

use stepwise_core::handshake::{Baseline, PromptSheet, Urgency};

use super::fixtures::*;

#[test]
fn the_baseline_renders_in_the_spec_s_order_and_a_sheet_can_reorder_it() {
    let stream = stream();
    let job = job();
    let baseline = Baseline {
        stream: Some(&stream),
        literature: None,
        job: Some(&job),
        writing_style: Some("executive"),
        earlier: "",
    };
    assert_eq!(
        baseline.synthesized_goal(),
        "Monitor EGFR inhibitor trials, in service of: Spot new entrants, Track pricing."
    );
    let text = baseline.render(&PromptSheet::builtin(), "research", "question", None, None);
    let order: Vec<usize> = [
        "## Writing style",
        "## Your role",
        "## What is loaded",
        "## The user's guidance",
        "## Current goal",
        "## Phase 3 outputs",
    ]
    .iter()
    .map(|h| text.find(h).unwrap_or_else(|| panic!("{h} in {text}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text.contains("the conclusion first") && text.contains("- Dose escalation"));
    assert!(!text.contains("## Supplied Context Attachments"));

    let sheet = PromptSheet::parse(
        "[text system_role_description]\nAnalyst.\n[text research_role_rationale]\nBecause.\n[style default]\nPlain.\n\
         [section attachments]\n## Given\n{attachments}\n[section goal]\nGOAL: {synthesized_goal}\n",
    )
    .unwrap();
    let mut request = request_with(&[Urgency::Required]);
    request.supply("s1", supply("my pasted note")).unwrap();
    let text = baseline.render(&sheet, "research", "question", Some(&request), None);
    assert!(text.starts_with("## Given\nFor the user message m1:\n### [Phase 0] slot s1 (typed by the user, supplied by the user)\nmy pasted note"), "{text}");
    assert!(text.ends_with(
        "GOAL: Monitor EGFR inhibitor trials, in service of: Spot new entrants, Track pricing."
    ));
    // Carried supplies of earlier turns follow the turn's own.
    let carried_text = "For the user message m0:\n### [Phase 0] notes (typed by the user, supplied by the user)\nold note";
    let with_earlier = Baseline {
        earlier: carried_text,
        ..baseline
    };
    let text = with_earlier.render(&sheet, "research", "question", Some(&request), None);
    assert!(
        text.contains("my pasted note\nFor the user message m0:"),
        "{text}"
    );
}

#[test]
fn what_the_owner_wrote_reaches_the_prompt_redacted_and_within_limits() {
    let stream = stream();
    let mut job = job();
    let key = "sk-abcdefghijklmnopqrstuvwx";
    job.synthesized_result = Some(format!(
        "Ask ann@example.org. Key {key}. {}",
        "s".repeat(50_000)
    ));
    job.points_of_interest = vec![format!("Mail {key}"); 2_000];
    let baseline = Baseline {
        stream: Some(&stream),
        literature: None,
        job: Some(&job),
        writing_style: None,
        earlier: "",
    };
    let mut request = request_with(&[Urgency::Required]);
    request
        .supply("s1", supply("typed with bob@lab.io"))
        .unwrap();
    let text = baseline.render(
        &PromptSheet::builtin(),
        "research",
        "question",
        Some(&request),
        None,
    );
    for secret in ["lead@example.com", "ann@example.org", key, "bob@lab.io"] {
        assert!(!text.contains(secret), "{secret} in the prompt");
    }
    assert!(text.contains("Contact [redacted e-mail] for access."));
    assert!(text.len() < 16_000, "{} bytes", text.len());
    assert_eq!(
        text.matches("[… cut]").count(),
        2,
        "the summary and the points, cut"
    );
}

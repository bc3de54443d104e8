//! The offline provider: a deterministic, rule-based stand-in for a model, so Stepwise runs with
//! no API key and no network. It is not an LLM and says so in every reply. It answers in the
//! marker format: it extracts the user's text for the current step, then asks the next step's
//! question with suggestions or options drawn from the spec.

mod answer;
mod assistant;
#[cfg(test)]
mod assistant_tests;
mod job_view;

pub use answer::OfflineAnswer;
pub use assistant::{assistant_reply, context_reply};

use std::fmt::Write;

use crate::turn::TurnPlan;
use crate::workflow::{
    ActionEffect, Config, DONE_STEP, FieldValue, StepKind, StepSpec, WorkflowSpec,
};

/// The label that opens every offline reply.
pub const OFFLINE_LABEL: &str = "[offline assistant: rule-based, not an LLM]";
/// Most list suggestions an offline reply offers.
const MAX_SUGGESTIONS: usize = 5;

/// The reply a model would stream for this planned turn.
///
/// ```
/// use stepwise_core::{offline, protocol::ChatRequest, turn, workflow::WorkflowSpec};
/// let spec = WorkflowSpec::builtin("research_stream").unwrap();
/// let request = ChatRequest { message: "Track rival launches".into(), ..ChatRequest::default() };
/// let Ok(turn::TurnStart::CallModel(plan)) = turn::begin(&spec, &request) else { unreachable!() };
/// let reply = offline::reply(&spec, &plan);
/// assert!(reply.contains("EXTRACTED_DATA: purpose=Track rival launches"));
/// ```
pub fn reply(spec: &WorkflowSpec, plan: &TurnPlan) -> String {
    let mut out = format!("{OFFLINE_LABEL} ");
    let mut markers = String::new();
    let mut config = plan.state.config.clone();
    let mut ask = plan.step.clone();
    let user = plan.messages.last().map_or("", |m| m.content.as_str());
    match &plan.effect {
        ActionEffect::AskModel => match spec.step(&plan.step).filter(|s| s.field.is_some()) {
            Some(step) => match extract(spec, step, &config, user) {
                Some(value) => {
                    let field = step.field.clone().expect("filtered on field");
                    let _ = writeln!(markers, "EXTRACTED_DATA: {field}={}", render(&value));
                    config.insert(field.clone(), value);
                    ask = spec
                        .next_step_after(&plan.step, &config, &plan.state.skipped)
                        .to_owned();
                    let _ = write!(out, "Noted your {}. ", label(&field));
                }
                None => out.push_str("I could not take an answer from that. "),
            },
            None if plan.step == DONE_STEP => out.push_str("This configuration is complete. "),
            None => out.push_str(
                "When everything looks right, press Confirm; use the pencil to change a field. ",
            ),
        },
        ActionEffect::Completed { field } => {
            let _ = write!(out, "Saved your {}. ", label(field));
        }
        ActionEffect::Skipped { field } => {
            let _ = write!(out, "Skipped {}. ", label(field));
        }
        ActionEffect::WentTo { step } => {
            let _ = write!(out, "Back to {}. ", label(step));
        }
        ActionEffect::Confirmed => out.push_str("Confirmed. "),
        ActionEffect::FieldEdited { .. } => {}
    }
    match spec.step(&ask) {
        Some(step) if step.kind == StepKind::Confirm => {
            out.push_str(&step.question);
            out.push('\n');
            summary(&mut out, spec, &config);
        }
        Some(step) => ask_step(&mut out, &mut markers, spec, step, &config),
        None => out.push_str("Your configuration is complete. Thank you!\n"),
    }
    out.push_str(&markers);
    out
}

fn ask_step(
    out: &mut String,
    markers: &mut String,
    spec: &WorkflowSpec,
    step: &StepSpec,
    config: &Config,
) {
    out.push_str(&step.question);
    if !step.required {
        out.push_str(" You can skip this step.");
    }
    out.push('\n');
    let field = step.field.as_deref().unwrap_or(&step.id);
    match step.kind {
        StepKind::SingleChoice => {
            let _ = writeln!(markers, "SUGGESTIONS: {}", step.choices.join(", "));
        }
        StepKind::MultiChoice => {
            let _ = writeln!(markers, "OPTIONS: {}", step.choices.join("|"));
            let _ = writeln!(
                markers,
                "PROPOSED_MESSAGE: Continue with selected {}",
                label(field)
            );
        }
        // Like a model following its instructions: list ideas only where the guidance asks.
        StepKind::List if step.guidance.contains("SUGGESTIONS") => {
            let ideas = ideas_from_other_fields(spec, step, config);
            if !ideas.is_empty() {
                let _ = writeln!(markers, "SUGGESTIONS: {}", ideas.join(", "));
            }
        }
        StepKind::List | StepKind::Text | StepKind::Confirm => {}
    }
    let _ = writeln!(markers, "TARGET_FIELD: {field}");
}

/// Reads the current step's value from the user's text, or `None` when nothing usable is there
/// (a question, an empty or invalid answer): the step then stays open.
fn extract(
    spec: &WorkflowSpec,
    step: &StepSpec,
    config: &Config,
    text: &str,
) -> Option<FieldValue> {
    let text = text.trim();
    if text.is_empty() || text.ends_with('?') {
        return None;
    }
    let mentioned: Vec<String> = step
        .choices
        .iter()
        .filter(|c| text.to_lowercase().contains(&c.to_lowercase()))
        .cloned()
        .collect();
    let value = match step.kind {
        StepKind::Text => FieldValue::Text(text.to_owned()),
        StepKind::SingleChoice => match mentioned.first() {
            Some(choice) => FieldValue::Text(choice.clone()),
            None if step.open => FieldValue::Text(text.to_owned()),
            None => return None,
        },
        StepKind::List | StepKind::MultiChoice => {
            let new = if step.kind == StepKind::MultiChoice && (!mentioned.is_empty() || !step.open)
            {
                mentioned
            } else {
                split_items(text)
            };
            let mut items = match step.field.as_ref().and_then(|f| config.get(f)) {
                Some(FieldValue::List(existing)) => existing.clone(),
                _ => Vec::new(),
            };
            items.extend(new);
            FieldValue::List(items)
        }
        StepKind::Confirm => return None,
    };
    spec.normalize_value(step, &value)
        .ok()
        .filter(|v| !v.is_empty())
}

fn split_items(text: &str) -> Vec<String> {
    text.split([',', ';', '\n'])
        .flat_map(|part| part.split(" and "))
        .map(|item| item.trim().trim_end_matches('.').trim().to_owned())
        .filter(|item| !item.is_empty())
        .collect()
}

/// List suggestions taken from other list fields already collected (e.g. keywords from focus
/// areas and competitors), nearest fields first.
fn ideas_from_other_fields(spec: &WorkflowSpec, step: &StepSpec, config: &Config) -> Vec<String> {
    let own: &[String] = match step.field.as_ref().and_then(|f| config.get(f)) {
        Some(FieldValue::List(items)) => items,
        _ => &[],
    };
    let mut ideas: Vec<String> = Vec::new();
    // Nearest fields first: the areas just chosen say more about keywords than the goals do.
    for other in spec
        .steps
        .iter()
        .rev()
        .filter(|s| s.id != step.id && s.kind.is_list())
    {
        if let Some(FieldValue::List(items)) = other.field.as_ref().and_then(|f| config.get(f)) {
            for item in items {
                let fresh = !own.contains(item)
                    && !ideas.contains(item)
                    && spec.normalize_item(step, item).is_ok();
                if fresh && ideas.len() < MAX_SUGGESTIONS {
                    ideas.push(item.clone());
                }
            }
        }
    }
    ideas
}

/// The review summary: one line per field, values quoted (a quote or line break inside a value
/// is escaped), so no value can start a line of its own, let alone a marker line.
fn summary(out: &mut String, spec: &WorkflowSpec, config: &Config) {
    for step in &spec.steps {
        let Some(field) = &step.field else { continue };
        let value = match config.get(field) {
            Some(FieldValue::Text(text)) => quoted(text),
            Some(FieldValue::List(items)) => items
                .iter()
                .map(|i| quoted(i))
                .collect::<Vec<_>>()
                .join(", "),
            None => "(skipped)".to_owned(),
        };
        let _ = writeln!(out, "- {}: {value}", label(field));
    }
}

/// A value as a JSON string: quoted, with quotes, backslashes and control characters escaped.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn render(value: &FieldValue) -> String {
    match value {
        FieldValue::Text(text) => text.replace('\n', " "),
        FieldValue::List(items) => items.join(", "),
    }
}

fn label(name: &str) -> String {
    name.replace('_', " ")
}

/// A research answer from the offline provider named `provider`: a short deterministic report on
/// the prompt, or, for a synthesis prompt (one listing `=== Source N: ... ===` sections), a
/// synthesis that names every source and the line each opens with. Labelled as not an LLM.
///
/// Each offline provider takes its own angle, chosen by its name (`*analyst*`: the evidence to
/// weigh; `*critic*`: the caveats; any other: an overview), so that the reports of the three
/// providers a newcomer runs differ in substance and comparing them shows something. A report
/// does not repeat the provider's name: the app already shows whose report it is, and a name in
/// the text would be the one word comparisons find unique to it.
///
/// ```
/// use stepwise_core::offline::research_answer;
/// let report = research_answer("offline", "Compare EGFR inhibitors");
/// assert!(report.contains("Compare EGFR inhibitors"));
/// assert!(research_answer("offline-critic", "Compare EGFR inhibitors").contains("Caveats:"));
/// ```
pub fn research_answer(provider: &str, prompt: &str) -> String {
    let sources = synthesis_sources(prompt);
    if !sources.is_empty() {
        let mut out = format!(
            "[offline provider {provider}: rule-based, not an LLM]\nSynthesis of {}.\n",
            counted(sources.len(), "source", "sources")
        );
        for (label, body) in &sources {
            match opening(body) {
                Some(line) => {
                    let _ = writeln!(out, "- Source {label} opens with: {line}");
                }
                None => {
                    let _ = writeln!(out, "- Source {label} has no text to draw on.");
                }
            }
        }
        let points: Vec<String> = sources
            .iter()
            .map(|(label, _)| format!("Follow up on Source {label}"))
            .collect();
        let _ = writeln!(
            out,
            "POINTS_OF_INTEREST: {}",
            serde_json::to_string(&points).unwrap_or_default()
        );
        return out;
    }
    let topic = prompt.trim().lines().next().unwrap_or("").trim();
    let terms = key_terms(prompt);
    let listed = if terms.is_empty() {
        "the question as asked".to_owned()
    } else {
        terms.join(", ")
    };
    // The label shares the heading's line: on a line of its own it would be the sentence every
    // offline report has in common, and comparisons would find it first.
    let mut out = format!("[offline provider: rule-based, not an LLM] Report on: {topic}\n");
    match Angle::of(provider) {
        Angle::Overview => {
            let _ = writeln!(out, "- Key terms: {listed}.");
            let _ = writeln!(
                out,
                "- Scope: {} in the question.",
                counted(prompt.split_whitespace().count(), "word", "words")
            );
            let _ = writeln!(
                out,
                "- Read first: recent reviews that cover {listed} together."
            );
        }
        Angle::Evidence => {
            let _ = writeln!(
                out,
                "- Evidence to weigh: comparative studies, trials or cohorts measuring {listed}."
            );
            out.push_str(
                "- Outcomes that would settle it: costs, effect sizes and follow-up time.\n",
            );
            out.push_str(
                "- Strongest designs first: randomized trials, then prospective cohorts.\n",
            );
        }
        Angle::Caveats => {
            out.push_str(
                "- Caveats: the question leaves the setting, population and time frame open.\n",
            );
            out.push_str(
                "- Risks of bias: small samples, short follow-up, sponsors with interests.\n",
            );
            let _ = writeln!(
                out,
                "- Open question: which result about {listed} would change the decision?"
            );
        }
    }
    out.push_str("- Method: deterministic rules, for running without keys.\n");
    out
}

/// The angle an offline research provider takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Angle {
    /// The question's terms and scope, and what to read first.
    Overview,
    /// The evidence that would answer it.
    Evidence,
    /// What could make an answer wrong.
    Caveats,
}

impl Angle {
    fn of(provider: &str) -> Angle {
        let name = provider.to_ascii_lowercase();
        if name.contains("critic") {
            Angle::Caveats
        } else if name.contains("analyst") {
            Angle::Evidence
        } else {
            Angle::Overview
        }
    }
}

/// The `=== Source N: label ===` sections of a synthesis prompt: each label with its text.
fn synthesis_sources(prompt: &str) -> Vec<(&str, String)> {
    let mut sources: Vec<(&str, String)> = Vec::new();
    for line in prompt.lines() {
        let label = line
            .strip_prefix("=== Source ")
            .and_then(|l| l.strip_suffix(" ==="));
        match (label, sources.last_mut()) {
            (Some(label), _) => sources.push((label, String::new())),
            (None, Some((_, body))) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    sources
}

/// The first line of a report worth quoting: its first bullet, else its first line of text,
/// past any `[...]` label and `Report on:` heading (with the label or without); at most 200
/// characters.
pub(crate) fn opening(report: &str) -> Option<String> {
    let lines: Vec<&str> = report
        .lines()
        .map(without_label)
        .filter(|l| !l.is_empty() && !l.starts_with("Report on:"))
        .collect();
    let line = lines
        .iter()
        .find(|l| l.starts_with("- "))
        .or(lines.first())?;
    let line = line.trim_start_matches("- ");
    let mut cut: String = line.chars().take(200).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    Some(cut)
}

/// A line without the offline label that may open it (`[offline provider: rule-based, not an
/// LLM]`), trimmed: empty for a line that is only the label.
pub(crate) fn without_label(line: &str) -> &str {
    let line = line.trim();
    match line.find(']') {
        Some(end) if line.starts_with('[') && line[..end].contains("not an LLM") => {
            line[end + 1..].trim_start()
        }
        _ => line,
    }
}

/// The question's key terms: words of four letters or more, not filler, lowercased, at most six.
fn key_terms(prompt: &str) -> Vec<String> {
    const FILLER: &[&str] = &[
        "about",
        "been",
        "best",
        "better",
        "between",
        "compare",
        "compared",
        "comparing",
        "comparison",
        "does",
        "from",
        "good",
        "have",
        "into",
        "less",
        "more",
        "most",
        "much",
        "other",
        "should",
        "some",
        "than",
        "that",
        "their",
        "there",
        "these",
        "they",
        "this",
        "versus",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "with",
        "would",
        "your",
    ];
    let mut terms: Vec<String> = Vec::new();
    for word in prompt.split(|c: char| !c.is_alphanumeric() && c != '-') {
        let word = word.trim_matches('-').to_lowercase();
        if word.chars().count() >= 4 && !FILLER.contains(&word.as_str()) && !terms.contains(&word) {
            terms.push(word);
        }
        if terms.len() == 6 {
            break;
        }
    }
    terms
}

/// `n` with the singular or plural noun: `1 source`, `3 sources`.
pub(crate) fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::research_answer;
    use crate::research::{Research, compare_reports};

    const QUESTION: &str = "How do heat pumps compare with gas boilers for an old house?";

    /// A completed job of `providers`, each report the offline provider's.
    fn job(providers: &[&str]) -> Research {
        let results: Vec<serde_json::Value> = providers
            .iter()
            .map(|p| {
                serde_json::json!({"provider": p, "status": "completed", "attempt": 1,
                "dispatched_at": 0, "result": research_answer(p, QUESTION)})
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "id": "r1", "title": "Heat pumps", "prompt": QUESTION, "selected_llms": providers,
            "synthesis_llm": "offline", "status": "completed", "created_at": 0, "llm_results": results,
        }))
        .unwrap()
    }

    #[test]
    fn offline_reports_differ_by_provider_and_comparing_them_finds_more_than_their_names() {
        let providers = ["offline", "offline-analyst", "offline-critic"];
        let reports: Vec<String> = providers
            .iter()
            .map(|p| research_answer(p, QUESTION))
            .collect();
        for (provider, report) in providers.iter().zip(&reports) {
            assert!(
                report.starts_with(
                    "[offline provider: rule-based, not an LLM] Report on: How do heat pumps"
                ),
                "{report}"
            );
            assert!(
                !report.contains(&format!("offline provider {provider}")),
                "{report}"
            );
        }
        assert!(
            reports[0].contains("- Key terms: heat, pumps, boilers, house."),
            "{}",
            reports[0]
        );
        assert!(!reports[1].contains("analyst") && !reports[2].contains("critic"));
        assert!(
            reports[1].contains("- Evidence to weigh:"),
            "{}",
            reports[1]
        );
        assert!(reports[2].contains("- Caveats:"), "{}", reports[2]);
        let research = job(&providers);
        for (a, b) in [
            ("offline", "offline-analyst"),
            ("offline-analyst", "offline-critic"),
        ] {
            let text = compare_reports(&research, Some(a), Some(b)).unwrap();
            for side in [a, b] {
                let only = text
                    .lines()
                    .find(|l| l.starts_with(&format!("Only {side}: ")))
                    .unwrap();
                assert!(
                    !only.ends_with(": (none)") && !only.contains(&format!(": {side}")),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn a_synthesis_names_each_source_with_its_opening_and_counts_in_the_singular() {
        let one = research_answer(
            "offline",
            &format!(
                "Question:\n{QUESTION}\n\n=== Source 1: offline-critic (model report) ===\n{}\n",
                research_answer("offline-critic", QUESTION)
            ),
        );
        assert!(
            one.starts_with(
                "[offline provider offline: rule-based, not an LLM]\nSynthesis of 1 source.\n"
            ),
            "{one}"
        );
        assert!(
            one.contains(
                "- Source 1: offline-critic (model report) opens with: Caveats: the question leaves"
            ),
            "{one}"
        );
        assert!(
            one.contains(
                "POINTS_OF_INTEREST: [\"Follow up on Source 1: offline-critic (model report)\"]"
            ),
            "{one}"
        );
        let report = research_answer("offline", "Why?");
        assert!(
            report.contains("- Scope: 1 word in the question."),
            "{report}"
        );
    }
}

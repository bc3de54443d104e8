//! The offline provider: a deterministic, rule-based stand-in for a model, so Stepwise runs with
//! no API key and no network. It is not an LLM and says so in every reply. It answers in the
//! marker format: it extracts the user's text for the current step, then asks the next step's
//! question with suggestions or options drawn from the spec.

mod assistant;

pub use assistant::{OfflineAnswer, assistant_reply, context_reply};

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
/// synthesis that names every source. Labelled as not an LLM.
///
/// ```
/// let report = stepwise_core::offline::research_answer("offline", "Compare EGFR inhibitors");
/// assert!(report.contains("Compare EGFR inhibitors"));
/// ```
pub fn research_answer(provider: &str, prompt: &str) -> String {
    let sources: Vec<&str> = prompt
        .lines()
        .filter_map(|l| {
            l.strip_prefix("=== Source ")
                .and_then(|l| l.strip_suffix(" ==="))
        })
        .collect();
    if !sources.is_empty() {
        let mut out = format!(
            "[offline provider {provider}: rule-based, not an LLM]\nSynthesis of {} sources.\n",
            sources.len()
        );
        for source in &sources {
            let _ = writeln!(
                out,
                "- Findings from Source {source} agree on the main question."
            );
        }
        let points: Vec<String> = sources
            .iter()
            .map(|s| format!("Follow up on Source {s}"))
            .collect();
        let _ = writeln!(
            out,
            "POINTS_OF_INTEREST: {}",
            serde_json::to_string(&points).unwrap_or_default()
        );
        return out;
    }
    let topic = prompt.trim().lines().next().unwrap_or("").trim();
    format!(
        "[offline provider {provider}: rule-based, not an LLM]\nReport on: {topic}\n- Scope: {} words in the question.\n- Method: deterministic rules, for running without keys.\n",
        prompt.split_whitespace().count()
    )
}

//! Completing a turn: validating and applying what the model extracted, deciding the next step,
//! and building the ChatResponse with chips and checkboxes the edge will accept.

use serde::{Deserialize, Serialize};

use super::TurnPlan;
use crate::markers::{ExtractedField, Parsed};
use crate::protocol::{ChatResponse, CheckboxOption};
use crate::workflow::{FieldValue, StepKind, StepSpec, WorkflowSpec, WorkflowState};

/// Label of the Continue button when the model proposed none.
const DEFAULT_PROPOSED_MESSAGE: &str = "Continue with selected";

/// Something the model produced that was dropped or corrected, for logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnNote {
    /// Stable code: a parser diagnostic code, or `unknown_field`, `invalid_value`,
    /// `invalid_suggestion`, `target_mismatch`, `empty_reply`.
    pub code: String,
    /// Human explanation.
    pub message: String,
}

/// The result of a turn: the response and what was dropped on the way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnOutcome {
    /// The response to send.
    pub response: ChatResponse,
    /// What was dropped or corrected.
    pub notes: Vec<TurnNote>,
}

/// Applies the parsed model reply to the planned turn (spec §3, STEP 3-4).
///
/// Extracted values are validated against the spec; unknown fields and invalid values are
/// dropped with a note and never applied. The step advances only when its field is now
/// complete. Chips and checkboxes are those of the step the response leads to, restricted to
/// what the spec accepts.
pub fn finish(spec: &WorkflowSpec, plan: &TurnPlan, parsed: Parsed) -> TurnOutcome {
    let mut notes: Vec<TurnNote> = parsed
        .diagnostics
        .iter()
        .map(|d| TurnNote {
            code: d.code.as_str().to_owned(),
            message: d.message.clone(),
        })
        .collect();
    let mut state = plan.state.clone();
    let applied = apply_extracted(spec, &mut state, &parsed.extracted, &mut notes);

    // Advance only when this reply completed the step (Scenario 3); a step revisited with
    // go_to_step stays open until the model extracts a new value for it.
    let completed = |field: &String| applied.contains(field);
    let next_step = match spec.step(&plan.step) {
        Some(step)
            if step.field.as_ref().is_some_and(completed)
                && spec.is_filled(step, &state.config) =>
        {
            spec.next_step_after(&plan.step, &state.config, &state.skipped)
                .to_owned()
        }
        _ => plan.step.clone(),
    };
    let target = spec.step(&next_step).filter(|s| s.field.is_some());
    let target_field = target.and_then(|s| s.field.clone());
    if let Some(proposed) = &parsed.target_field
        && Some(proposed) != target_field.as_ref()
    {
        notes.push(note(
            "target_mismatch",
            format!("the model's TARGET_FIELD `{proposed}` was replaced by the step's field"),
        ));
    }
    let suggestions = target
        .map(|step| suggestions_for(spec, step, &parsed.suggestions, &mut notes))
        .unwrap_or_default();
    let options = target
        .map(|step| options_for(spec, step, &state, &parsed.options, &mut notes))
        .unwrap_or_default();
    let proposed_message = match (&parsed.proposed_message, options.is_empty()) {
        (_, true) => None,
        (Some(text), false) if !text.is_empty() => Some(text.clone()),
        _ => Some(DEFAULT_PROPOSED_MESSAGE.to_owned()),
    };
    let mut message = parsed.message;
    if message.is_empty() {
        notes.push(note(
            "empty_reply",
            "the model's reply had no text; the step's question is shown instead".into(),
        ));
        message = spec
            .step(&next_step)
            .map(|s| s.question.clone())
            .unwrap_or_default();
    }
    let response = ChatResponse {
        message,
        next_step,
        updated_config: state.config,
        target_field,
        suggestions,
        options,
        proposed_message,
        error: None,
        skipped: state.skipped,
        suggested_values: parsed.suggested_values,
        suggested_actions: parsed.suggested_actions,
        payloads: parsed.payloads,
        conversation_id: plan.conversation_id.clone(),
        conversation_token: None,
        turns: None,
    };
    TurnOutcome { response, notes }
}

fn apply_extracted(
    spec: &WorkflowSpec,
    state: &mut WorkflowState,
    extracted: &[ExtractedField],
    notes: &mut Vec<TurnNote>,
) -> Vec<String> {
    // The last valid value for a field wins (the model sends full lists); an invalid later
    // value does not erase an earlier valid one. Scanning from the end keeps this linear:
    // `applied` holds at most one entry per field of the spec.
    let mut applied: Vec<String> = Vec::new();
    let mut dropped: Vec<TurnNote> = Vec::new();
    for pair in extracted.iter().rev() {
        if applied.contains(&pair.field) {
            continue;
        }
        let Some(step) = spec.step_for_field(&pair.field) else {
            let message = format!("extracted field `{}` is not in the workflow", pair.field);
            dropped.push(note("unknown_field", message));
            continue;
        };
        match spec.normalize_value(step, &field_value(step.kind, &pair.value)) {
            Ok(value) if !value.is_empty() => {
                state.skipped.retain(|f| *f != pair.field);
                state.config.insert(pair.field.clone(), value);
                applied.push(pair.field.clone());
            }
            Ok(_) => dropped.push(note(
                "invalid_value",
                format!("extracted `{}` is empty", pair.field),
            )),
            Err(error) => dropped.push(note(error.code(), error.to_string())),
        }
    }
    notes.extend(dropped.into_iter().rev());
    applied
}

/// Reads a raw extracted value for a field kind: list kinds take a JSON array of strings or a
/// comma-separated list.
fn field_value(kind: StepKind, raw: &str) -> FieldValue {
    if !kind.is_list() {
        return FieldValue::Text(raw.to_owned());
    }
    if raw.starts_with('[')
        && let Ok(items) = serde_json::from_str::<Vec<String>>(raw)
    {
        return FieldValue::List(items);
    }
    FieldValue::List(raw.split(',').map(|item| item.trim().to_owned()).collect())
}

/// The chips of the step the response leads to: the model's suggestions the step accepts, in
/// the spec's spelling; the choices of a single-choice step when none is usable.
fn suggestions_for(
    spec: &WorkflowSpec,
    step: &StepSpec,
    proposed: &[String],
    notes: &mut Vec<TurnNote>,
) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for value in proposed {
        match spec.normalize_item(step, value) {
            Ok(item) if !kept.contains(&item) => kept.push(item),
            Ok(_) => {}
            Err(error) => notes.push(note(
                "invalid_suggestion",
                format!("suggestion dropped: {error}"),
            )),
        }
    }
    if kept.is_empty() && step.kind == StepKind::SingleChoice {
        return step.choices.clone();
    }
    kept
}

/// The checkboxes of a list step: the model's options the step accepts (the choices of a
/// multi-choice step when none is usable), plus every value already selected, checked.
fn options_for(
    spec: &WorkflowSpec,
    step: &StepSpec,
    state: &WorkflowState,
    proposed: &[String],
    notes: &mut Vec<TurnNote>,
) -> Vec<CheckboxOption> {
    if !step.kind.is_list() {
        if !proposed.is_empty() {
            let message = format!("`{}` takes one value; its OPTIONS were dropped", step.id);
            notes.push(note("invalid_suggestion", message));
        }
        return Vec::new();
    }
    let mut values: Vec<String> = Vec::new();
    for value in proposed {
        match spec.normalize_item(step, value) {
            Ok(item) => values.push(item),
            Err(error) => notes.push(note(
                "invalid_suggestion",
                format!("option dropped: {error}"),
            )),
        }
    }
    if values.is_empty() && step.kind == StepKind::MultiChoice {
        values = step.choices.clone();
    }
    let selected: &[String] = match step.field.as_ref().and_then(|f| state.config.get(f)) {
        Some(FieldValue::List(items)) => items,
        _ => &[],
    };
    // Values already chosen stay visible and checked, so Continue never drops them (Scenario 6).
    values.extend(selected.iter().cloned());
    let mut options: Vec<CheckboxOption> = Vec::new();
    for value in values {
        if options.iter().any(|o| o.value.eq_ignore_ascii_case(&value)) {
            continue;
        }
        let checked = selected.iter().any(|s| s.eq_ignore_ascii_case(&value));
        options.push(CheckboxOption {
            label: value.clone(),
            value,
            checked,
        });
    }
    options
}

fn note(code: &str, message: String) -> TurnNote {
    TurnNote {
        code: code.to_owned(),
        message,
    }
}

//! The system prompt of a turn: the workflow map, the config so far, the current step's
//! guidance, what the user just did, and how to write marker lines.

use std::fmt::Write;

use crate::workflow::{
    ActionEffect, DONE_STEP, FieldValue, StepKind, StepSpec, UserAction, WorkflowSpec,
    WorkflowState,
};

pub(super) fn system_prompt(
    spec: &WorkflowSpec,
    state: &WorkflowState,
    effect: &ActionEffect,
    action: &UserAction,
) -> String {
    let mut out = String::with_capacity(2048);
    let _ = writeln!(
        out,
        "You are Stepwise, guiding the user through \"{}\" one step at a time.",
        spec.title
    );
    out.push_str("The application decides which step is current. Stay on the current step; never claim a step is done unless the data was collected.\n\n");
    workflow_map(&mut out, spec, state);
    collected(&mut out, spec, state);
    match spec.step(&state.current_step) {
        Some(step) => current_step(&mut out, step),
        None => out.push_str(
            "\nThe configuration is confirmed and complete. Thank the user, summarize it in one or two sentences, and do not extract data unless they ask for a change.\n",
        ),
    }
    let _ = writeln!(out, "\nWhat just happened: {}", happened(effect, action));
    reply_format(&mut out, spec.step(&state.current_step));
    out
}

fn workflow_map(out: &mut String, spec: &WorkflowSpec, state: &WorkflowState) {
    out.push_str("Steps (done ✓, skipped –, current →):\n");
    for (i, step) in spec.steps.iter().enumerate() {
        let mark = if step.id == state.current_step {
            "→"
        } else if step
            .field
            .as_ref()
            .is_some_and(|f| state.skipped.contains(f))
        {
            "–"
        } else if spec.is_filled(step, &state.config) || (state.current_step == DONE_STEP) {
            "✓"
        } else {
            " "
        };
        let need = if step.kind == StepKind::Confirm {
            ""
        } else if step.required {
            " (required)"
        } else {
            " (optional)"
        };
        let _ = writeln!(
            out,
            "{mark} {}. {}{need}: {}",
            i + 1,
            step.id,
            step.question
        );
    }
}

fn collected(out: &mut String, spec: &WorkflowSpec, state: &WorkflowState) {
    out.push_str("\nCollected so far:\n");
    if state.config.is_empty() {
        out.push_str("(nothing yet)\n");
    }
    for step in &spec.steps {
        let Some(field) = &step.field else { continue };
        // Values are the user's words: quoted as JSON, never as lines of the prompt.
        match state.config.get(field) {
            Some(FieldValue::Text(text)) => {
                let _ = writeln!(out, "- {field}: {}", quoted(text));
            }
            Some(FieldValue::List(items)) => {
                let items: Vec<String> = items.iter().map(|i| quoted(i)).collect();
                let _ = writeln!(out, "- {field}: [{}]", items.join(", "));
            }
            None => {}
        }
    }
}

fn current_step(out: &mut String, step: &StepSpec) {
    let kind = match step.kind {
        StepKind::Text => "free text",
        StepKind::List => "a list of short items",
        StepKind::SingleChoice => "exactly one choice",
        StepKind::MultiChoice => "one or more choices",
        StepKind::Confirm => "confirmation of the whole configuration",
    };
    let _ = writeln!(
        out,
        "\nCurrent step: {} — {kind}{}",
        step.id,
        if step.required { ", required" } else { "" }
    );
    let _ = writeln!(out, "Question: {}", step.question);
    if !step.choices.is_empty() {
        let more = if step.open {
            " (others may be proposed)"
        } else {
            " (only these)"
        };
        let _ = writeln!(out, "Choices{more}: {}", step.choices.join(", "));
    }
    if !step.guidance.is_empty() {
        let _ = writeln!(out, "Guidance: {}", step.guidance);
    }
}

fn happened(effect: &ActionEffect, action: &UserAction) -> String {
    match (effect, action) {
        (ActionEffect::Completed { field }, UserAction::OptionSelected { selected_value, .. }) => {
            let value = quoted(selected_value);
            format!("the user picked {value} for {field}; it is saved. Acknowledge it in a few words, then ask the current step's question.")
        }
        (ActionEffect::Completed { field }, _) => {
            format!("the user's selection for {field} is saved. Acknowledge it in a few words, then ask the current step's question.")
        }
        (ActionEffect::Skipped { field }, _) => format!("the user skipped the optional {field}. Move on to the current step's question."),
        (ActionEffect::Confirmed, _) => "the user confirmed the configuration.".into(),
        (ActionEffect::WentTo { step }, _) => format!("the user went back to {step} to change it. Ask its question again."),
        _ => "the user wrote the message below. Extract the current step's data only if they clearly gave it; if they are unsure or off-topic, help or redirect them and do not extract.".into(),
    }
}

/// A user value as a JSON string (quoted, quotes and control characters escaped).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// The user message sent to the model when the user sent no text of their own.
pub(super) fn describe_action(effect: &ActionEffect) -> String {
    match effect {
        ActionEffect::Completed { field } => format!("(selection for {field} made)"),
        ActionEffect::Skipped { field } => format!("(skipped {field})"),
        ActionEffect::Confirmed => "(confirmed)".into(),
        ActionEffect::WentTo { step } => format!("(back to {step})"),
        ActionEffect::FieldEdited { field } => format!("(edited {field})"),
        ActionEffect::AskModel => "(no message)".into(),
    }
}

fn reply_format(out: &mut String, step: Option<&StepSpec>) {
    out.push_str(
        "\nReply format: write your reply to the user as plain text. After it, put marker lines, each on a line of its own:\n\
         EXTRACTED_DATA: field=value — only data the user clearly stated; one line per field; for list fields send the complete list (kept items plus new ones), comma-separated.\n",
    );
    match step.map(|s| s.kind) {
        Some(StepKind::SingleChoice | StepKind::Text | StepKind::List) => {
            out.push_str("SUGGESTIONS: a, b, c — up to 5 short answers the user can click (comma-separated).\n");
        }
        Some(StepKind::MultiChoice) => out.push_str(
            "OPTIONS: A|B|C — checkboxes the user can tick (pipe-separated).\n\
             PROPOSED_MESSAGE: text — the label of the button that submits the ticked options.\n",
        ),
        Some(StepKind::Confirm) | None => {}
    }
    if let Some(field) = step.and_then(|s| s.field.as_deref()) {
        let _ = writeln!(out, "TARGET_FIELD: {field}");
    }
    out.push_str("Never show or explain these markers to the user.\n");
}

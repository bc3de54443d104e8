//! A guided workflow walked through elicitation (`guided_configure`): each step becomes one
//! form built from the step's spec (its question; choices as an enum, several choices as a
//! multi-select, free text with its length limit, a list as comma-separated text, a "skip" box on
//! optional steps, a "confirm" box on the review), and the form's answer becomes the typed
//! action the app would send, which [`WorkflowSpec::apply_action`] validates exactly as it does
//! for the app.

use serde_json::{Map, Value, json};

use crate::workflow::{Config, FieldValue, StepKind, StepSpec, UserAction, WorkflowSpec};

/// What the person did with a step's form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepAnswer {
    /// The action to apply.
    Act(UserAction),
    /// They declined or dismissed the form: the walk stops.
    Stop,
    /// The form came back without what the step needs (the message says what).
    Invalid(String),
}

/// `elicitation/create`'s params for `step` of `spec`, with `config` so far (shown on the
/// review) and `refused`, why the last answer was refused, if it was.
///
/// ```
/// use stepwise_core::mcp::guided::step_request;
/// use stepwise_core::workflow::{Config, WorkflowSpec};
/// let spec = WorkflowSpec::builtin("research_stream").unwrap();
/// let step = spec.step("stream_type").unwrap();
/// let params = step_request(&spec, step, &Config::new(), None);
/// let value = &params["requestedSchema"]["properties"]["value"];
/// assert_eq!(value["enum"].as_array().unwrap().len(), step.choices.len());
/// ```
pub fn step_request(
    spec: &WorkflowSpec,
    step: &StepSpec,
    config: &Config,
    refused: Option<&str>,
) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let title = label(&step.id);
    match step.kind {
        StepKind::Confirm => {
            properties.insert(
                "confirm".into(),
                json!({"type": "boolean", "title": "Confirm this configuration", "default": false}),
            );
            required.push("confirm");
        }
        kind => {
            let mut value = match kind {
                StepKind::SingleChoice if !step.open => {
                    json!({"type": "string", "enum": step.choices})
                }
                StepKind::MultiChoice if !step.open => {
                    let mut list =
                        json!({"type": "array", "items": {"type": "string", "enum": step.choices}});
                    if let Some(max) = step.max_items {
                        list["maxItems"] = max.into();
                    }
                    list
                }
                StepKind::List | StepKind::MultiChoice => json!({"type": "string",
                    "description": "Several values, separated by commas."}),
                _ => json!({"type": "string"}),
            };
            value["title"] = title.clone().into();
            if let Some(max) = step.max_len
                && value["type"] == "string"
                && value.get("enum").is_none()
                && !kind.is_list()
            {
                value["maxLength"] = max.into();
            }
            if step.open && !step.choices.is_empty() {
                let before = value["description"].as_str().unwrap_or("").to_owned();
                let examples = format!("For example: {}.", step.choices.join(", "));
                value["description"] = format!("{before} {examples}").trim().to_owned().into();
            }
            properties.insert("value".into(), value);
            if step.required {
                required.push("value");
            } else {
                properties.insert(
                    "skip".into(),
                    json!({"type": "boolean", "title": "Skip this step", "default": false}),
                );
            }
        }
    }
    let mut message = String::new();
    if let Some(why) = refused {
        message.push_str(&format!("That was refused: {why}. "));
    }
    message.push_str(if step.question.is_empty() {
        &title
    } else {
        &step.question
    });
    if step.kind == StepKind::Confirm {
        message.push_str(&format!("\n\n{}", summary(spec, config)));
    }
    json!({"message": message, "requestedSchema": {"type": "object", "properties": properties, "required": required}})
}

/// Reads the client's answer to `step`'s form into the action the app would send.
///
/// ```
/// use serde_json::json;
/// use stepwise_core::mcp::guided::{read_step, StepAnswer};
/// use stepwise_core::workflow::{UserAction, WorkflowSpec};
/// let spec = WorkflowSpec::builtin("research_stream").unwrap();
/// let step = spec.step("keywords").unwrap();
/// let answer = Ok(json!({"action": "accept", "content": {"value": "EGFR, osimertinib"}}));
/// let StepAnswer::Act(UserAction::OptionsSelected { selected_values, .. }) = read_step(step, &answer) else { panic!() };
/// assert_eq!(selected_values, ["EGFR", "osimertinib"]);
/// assert_eq!(read_step(step, &Ok(json!({"action": "decline"}))), StepAnswer::Stop);
/// ```
pub fn read_step(step: &StepSpec, answer: &Result<Value, Value>) -> StepAnswer {
    let Ok(result) = answer else {
        return StepAnswer::Stop;
    };
    if result["action"] != "accept" {
        return StepAnswer::Stop;
    }
    let content = &result["content"];
    if step.kind == StepKind::Confirm {
        return if content["confirm"] == true {
            StepAnswer::Act(UserAction::Confirm)
        } else {
            StepAnswer::Stop
        };
    }
    let Some(field) = step.field.clone() else {
        return StepAnswer::Invalid("the step has no field".into());
    };
    if content["skip"] == true && !step.required {
        return StepAnswer::Act(UserAction::SkipStep {
            target_field: field,
        });
    }
    let value = &content["value"];
    if step.kind.is_list() {
        let items: Vec<String> = match value {
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Value::String(text) => text
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        return StepAnswer::Act(UserAction::OptionsSelected {
            target_field: field,
            selected_values: items,
        });
    }
    match value.as_str().map(str::trim) {
        Some(text) if !text.is_empty() => StepAnswer::Act(UserAction::OptionSelected {
            target_field: field,
            selected_value: text.to_owned(),
        }),
        _ => StepAnswer::Invalid("a value is needed".into()),
    }
}

/// The configuration as lines, `Label: value`, in the steps' order.
pub fn summary(spec: &WorkflowSpec, config: &Config) -> String {
    spec.steps
        .iter()
        .filter_map(|step| {
            let field = step.field.as_ref()?;
            let shown = match config.get(field) {
                Some(FieldValue::Text(text)) => text.clone(),
                Some(FieldValue::List(items)) => items.join(", "),
                None => "(skipped)".into(),
            };
            Some(format!("{}: {shown}", label(field)))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A field or step id as a person reads it: `focus_areas` → `Focus areas`.
fn label(id: &str) -> String {
    let words = id.replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

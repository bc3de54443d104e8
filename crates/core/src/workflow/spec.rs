//! Workflow specs: the ordered steps of a guided flow, loaded from JSON and validated.

use serde::{Deserialize, Serialize};

use super::SpecError;

/// Longest accepted id, field name or choice, in bytes.
pub const MAX_NAME_LEN: usize = 64;
/// Most steps a spec may declare.
pub const MAX_STEPS: usize = 64;
/// Most choices a step may declare.
pub const MAX_CHOICES: usize = 64;
/// Highest `max_items` a step may declare.
pub const MAX_ITEMS_LIMIT: usize = 1000;
/// The pseudo-step a workflow reaches once its review is confirmed.
pub const DONE_STEP: &str = "done";

/// What kind of value a step collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// One free-text value.
    Text,
    /// A list of free-text items.
    List,
    /// One value from `choices` (or any value when the step is `open`).
    SingleChoice,
    /// Several values from `choices` (or beyond them when the step is `open`).
    MultiChoice,
    /// A review step that collects no field and ends the workflow when confirmed.
    Confirm,
}

impl StepKind {
    /// Whether the kind holds a list of strings rather than one string.
    pub fn is_list(self) -> bool {
        matches!(self, StepKind::List | StepKind::MultiChoice)
    }

    /// Whether the kind offers `choices`.
    pub fn has_choices(self) -> bool {
        matches!(self, StepKind::SingleChoice | StepKind::MultiChoice)
    }
}

/// One step of a workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// Stable step id, used as `current_step` / `next_step` on the wire.
    pub id: String,
    /// The config field this step fills; absent only for a confirm step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What the step collects.
    pub kind: StepKind,
    /// Whether the workflow needs a value here (optional steps may be skipped).
    #[serde(default)]
    pub required: bool,
    /// The values a choice step offers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// For choice steps: the model may propose, and the user pick, values beyond `choices`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
    /// Fewest items of a list value (a required list needs at least 1 in any case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<usize>,
    /// Most items of a list value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<usize>,
    /// Longest text value, or list item, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_len: Option<usize>,
    /// The question shown to the user for this step.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub question: String,
    /// Instructions for the model while the conversation is on this step.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub guidance: String,
}

/// A whole workflow: an id, a title and its ordered steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkflowSpec {
    /// Stable workflow id (`research_stream` for the built-in one).
    pub id: String,
    /// Human title of the workflow.
    pub title: String,
    /// The steps in the order the conversation walks them.
    pub steps: Vec<StepSpec>,
}

const RESEARCH_STREAM_JSON: &str = include_str!("builtin/research_stream.json");

impl WorkflowSpec {
    /// Parses a spec from JSON and validates it.
    ///
    /// ```
    /// let spec = stepwise_core::workflow::WorkflowSpec::from_json(
    ///     r#"{"id":"demo","title":"Demo","steps":[
    ///         {"id":"name","field":"name","kind":"text","required":true},
    ///         {"id":"review","kind":"confirm"}]}"#,
    /// ).unwrap();
    /// assert_eq!(spec.steps.len(), 2);
    /// ```
    pub fn from_json(json: &str) -> Result<Self, SpecError> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| SpecError::Json(e.to_string()))?;
        Self::from_value(value)
    }

    /// Reads a spec from a JSON value and validates it. Typed data is always read through
    /// `serde_json::Value`, so the wasm build carries one deserializer per type, not several.
    pub fn from_value(value: serde_json::Value) -> Result<Self, SpecError> {
        let spec: WorkflowSpec =
            serde_json::from_value(value).map_err(|e| SpecError::Json(e.to_string()))?;
        spec.validate()?;
        Ok(spec)
    }

    /// Validates an already deserialized spec (ids, fields, choices, limits, confirm placement).
    pub fn validate(&self) -> Result<(), SpecError> {
        check_name("workflow id", &self.id)?;
        if self.steps.is_empty() {
            return Err(SpecError::NoSteps);
        }
        if self.steps.len() > MAX_STEPS {
            return Err(SpecError::TooManySteps(self.steps.len()));
        }
        for (index, step) in self.steps.iter().enumerate() {
            check_name("step id", &step.id)?;
            if step.id == DONE_STEP {
                return Err(SpecError::ReservedStepId(step.id.clone()));
            }
            if self.steps[..index].iter().any(|s| s.id == step.id) {
                return Err(SpecError::DuplicateStepId(step.id.clone()));
            }
            if let Some(field) = &step.field {
                check_name("field", field)?;
                if self.steps[..index]
                    .iter()
                    .any(|s| s.field.as_ref() == Some(field))
                {
                    return Err(SpecError::DuplicateField(field.clone()));
                }
            }
            check_step(step, index == self.steps.len() - 1)?;
        }
        Ok(())
    }

    /// The built-in specs compiled into the crate, by id.
    pub fn builtin(id: &str) -> Option<WorkflowSpec> {
        Self::builtin_json(id)
            .map(|json| WorkflowSpec::from_json(json).expect("the built-in specs are valid"))
    }

    /// The JSON text of a built-in spec (for readers with their own JSON parser, such as a
    /// browser's `JSON.parse`).
    pub fn builtin_json(id: &str) -> Option<&'static str> {
        match id {
            "research_stream" => Some(RESEARCH_STREAM_JSON),
            _ => None,
        }
    }

    /// Ids of the built-in specs.
    pub fn builtin_ids() -> &'static [&'static str] {
        &["research_stream"]
    }

    /// The step with this id.
    pub fn step(&self, id: &str) -> Option<&StepSpec> {
        self.steps.iter().find(|s| s.id == id)
    }

    /// The position of the step with this id.
    pub fn step_index(&self, id: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.id == id)
    }

    /// The step that fills this field.
    pub fn step_for_field(&self, field: &str) -> Option<&StepSpec> {
        self.steps
            .iter()
            .find(|s| s.field.as_deref() == Some(field))
    }
}

fn check_step(step: &StepSpec, is_last: bool) -> Result<(), SpecError> {
    let id = || step.id.clone();
    match (step.kind, &step.field) {
        (StepKind::Confirm, Some(_)) => return Err(SpecError::ConfirmWithField(id())),
        (StepKind::Confirm, None) if !is_last => return Err(SpecError::ConfirmNotLast(id())),
        (StepKind::Confirm, None) => {}
        (_, None) => return Err(SpecError::MissingField(id())),
        (_, Some(_)) => {}
    }
    if step.kind.has_choices() {
        if step.choices.is_empty() {
            return Err(SpecError::MissingChoices(id()));
        }
        if step.choices.len() > MAX_CHOICES {
            return Err(SpecError::TooManyChoices(id()));
        }
        for (i, choice) in step.choices.iter().enumerate() {
            check_choice(step, choice)?;
            if step.choices[..i]
                .iter()
                .any(|c| c.eq_ignore_ascii_case(choice))
            {
                return Err(SpecError::DuplicateChoice {
                    step: id(),
                    choice: choice.clone(),
                });
            }
        }
    } else if !step.choices.is_empty() || step.open {
        return Err(SpecError::UnexpectedChoices(id()));
    }
    let list_limits = step.min_items.is_some() || step.max_items.is_some();
    if list_limits && !step.kind.is_list() {
        return Err(SpecError::InvalidLimits {
            step: id(),
            reason: "min_items/max_items apply to list and multi_choice steps only",
        });
    }
    if let (Some(min), Some(max)) = (step.min_items, step.max_items)
        && min > max
    {
        return Err(SpecError::InvalidLimits {
            step: id(),
            reason: "min_items is greater than max_items",
        });
    }
    if step.max_items.is_some_and(|max| max > MAX_ITEMS_LIMIT) {
        return Err(SpecError::InvalidLimits {
            step: id(),
            reason: "max_items must be at most 1000",
        });
    }
    let effective_max = step.max_items.unwrap_or(super::DEFAULT_MAX_ITEMS);
    if step.min_items.is_some_and(|min| min > effective_max) {
        return Err(SpecError::InvalidLimits {
            step: id(),
            reason: "min_items is greater than the most items allowed",
        });
    }
    let closed_multi = step.kind == StepKind::MultiChoice && !step.open;
    if closed_multi && step.min_items.is_some_and(|min| min > step.choices.len()) {
        return Err(SpecError::InvalidLimits {
            step: id(),
            reason: "min_items is greater than the number of choices",
        });
    }
    if step.max_items == Some(0) {
        return Err(SpecError::InvalidLimits {
            step: id(),
            reason: "max_items must be at least 1",
        });
    }
    if step.max_len == Some(0) {
        return Err(SpecError::InvalidLimits {
            step: id(),
            reason: "max_len must be at least 1",
        });
    }
    if step.kind == StepKind::Confirm && (step.max_len.is_some() || step.required) {
        return Err(SpecError::InvalidLimits {
            step: id(),
            reason: "a confirm step takes no limits and no `required`",
        });
    }
    Ok(())
}

fn check_choice(step: &StepSpec, choice: &str) -> Result<(), SpecError> {
    let bad = choice.trim().is_empty()
        || choice.trim() != choice
        || choice.len() > MAX_NAME_LEN
        || choice.contains([',', '|', '\n', '\r']);
    if bad {
        return Err(SpecError::InvalidChoice {
            step: step.id.clone(),
            choice: choice.to_owned(),
        });
    }
    Ok(())
}

/// Ids and field names: 1..=64 of `[A-Za-z0-9_]`, so they survive marker lines (`field=value`).
fn check_name(what: &'static str, name: &str) -> Result<(), SpecError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(SpecError::InvalidName {
            what,
            name: name.to_owned(),
        })
    }
}

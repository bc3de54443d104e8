//! Config values: what a workflow has collected so far, and their validation against a step.

use serde::Serialize;

use super::{ActionError, Config, StepKind, StepSpec, WorkflowSpec};

/// Longest text value when a step sets no `max_len`, in characters.
pub const DEFAULT_MAX_TEXT_LEN: usize = 2_000;
/// Longest list item when a step sets no `max_len`, in characters.
pub const DEFAULT_MAX_ITEM_LEN: usize = 200;
/// Most list items when a step sets no `max_items`.
pub const DEFAULT_MAX_ITEMS: usize = 50;

/// A field's value: one string, or a list of strings.
/// Written untagged; read by a hand-written visitor (`wire.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum FieldValue {
    /// A text or single-choice value.
    Text(String),
    /// A list or multi-choice value.
    List(Vec<String>),
}

impl FieldValue {
    /// Whether the value counts as missing (blank text or no items).
    pub fn is_empty(&self) -> bool {
        match self {
            FieldValue::Text(text) => text.trim().is_empty(),
            FieldValue::List(items) => items.is_empty(),
        }
    }
}

impl WorkflowSpec {
    /// Checks a value for a step and returns its canonical form: text trimmed, choices in the
    /// spec's spelling, blank and repeated list items dropped. An empty value is returned as is:
    /// whether it may be empty is for the caller to decide.
    pub fn normalize_value(
        &self,
        step: &StepSpec,
        value: &FieldValue,
    ) -> Result<FieldValue, ActionError> {
        let field = step.field.as_deref().unwrap_or(&step.id);
        let invalid = |reason: String| ActionError::InvalidValue {
            field: field.to_owned(),
            reason,
        };
        match (step.kind, value) {
            (StepKind::Confirm, _) => Err(invalid("a confirm step holds no value".into())),
            (StepKind::Text, FieldValue::Text(text)) => {
                let text = text.trim();
                check_len(text, step.max_len.unwrap_or(DEFAULT_MAX_TEXT_LEN)).map_err(invalid)?;
                Ok(FieldValue::Text(text.to_owned()))
            }
            (StepKind::SingleChoice, FieldValue::Text(text)) => {
                let text = text.trim();
                if text.is_empty() {
                    return Ok(FieldValue::Text(String::new()));
                }
                canonical_choice(step, text)
                    .map(FieldValue::Text)
                    .map_err(invalid)
            }
            (StepKind::List | StepKind::MultiChoice, FieldValue::List(items)) => {
                let max = step.max_items.unwrap_or(DEFAULT_MAX_ITEMS);
                let mut out: Vec<String> = Vec::with_capacity(items.len().min(max + 1));
                for item in items.iter().filter(|i| !i.trim().is_empty()) {
                    let item = self.normalize_item(step, item)?;
                    if !out.iter().any(|o| o.eq_ignore_ascii_case(&item)) {
                        out.push(item);
                    }
                    // Stop early: the repeat check above stays bounded by the limit.
                    if out.len() > max {
                        return Err(invalid(format!("at most {max} items are allowed")));
                    }
                }
                let min = step.min_items.unwrap_or(0);
                if !out.is_empty() && out.len() < min {
                    return Err(invalid(format!(
                        "at least {min} items are needed, got {}",
                        out.len()
                    )));
                }
                Ok(FieldValue::List(out))
            }
            (StepKind::Text | StepKind::SingleChoice, FieldValue::List(_)) => {
                Err(invalid("expects one string, not a list".into()))
            }
            (StepKind::List | StepKind::MultiChoice, FieldValue::Text(_)) => {
                Err(invalid("expects a list of strings".into()))
            }
        }
    }

    /// Checks one value as an item of a step (a list item or a choice, trimmed and spelled as
    /// the spec spells it), without the list-level limits. Used for list items and for the
    /// chips and checkboxes offered to the user.
    pub fn normalize_item(&self, step: &StepSpec, item: &str) -> Result<String, ActionError> {
        let field = step.field.as_deref().unwrap_or(&step.id);
        let invalid = |reason: String| ActionError::InvalidValue {
            field: field.to_owned(),
            reason,
        };
        let item = item.trim();
        if item.is_empty() {
            return Err(invalid("a value is required".into()));
        }
        match step.kind {
            StepKind::SingleChoice | StepKind::MultiChoice => {
                canonical_choice(step, item).map_err(invalid)
            }
            StepKind::Text => {
                check_len(item, step.max_len.unwrap_or(DEFAULT_MAX_TEXT_LEN)).map_err(invalid)?;
                Ok(item.to_owned())
            }
            StepKind::List => {
                check_len(item, step.max_len.unwrap_or(DEFAULT_MAX_ITEM_LEN)).map_err(invalid)?;
                Ok(item.to_owned())
            }
            StepKind::Confirm => Err(invalid("a confirm step holds no value".into())),
        }
    }

    /// Whether a step's field holds a valid, non-empty value in `config`.
    pub fn is_filled(&self, step: &StepSpec, config: &Config) -> bool {
        let Some(value) = step.field.as_ref().and_then(|f| config.get(f)) else {
            return false;
        };
        matches!(self.normalize_value(step, value), Ok(v) if !v.is_empty())
    }

    /// Checks a whole config carried by a request and returns it normalized.
    pub fn normalize_config(&self, config: &Config) -> Result<Config, ActionError> {
        let mut out = Config::new();
        for (field, value) in config {
            let step = self
                .step_for_field(field)
                .ok_or_else(|| ActionError::InvalidConfig(format!("unknown field `{field}`")))?;
            let value = self
                .normalize_value(step, value)
                .map_err(|e| ActionError::InvalidConfig(e.to_string()))?;
            out.insert(field.clone(), value);
        }
        Ok(out)
    }
}

/// A collected value is one line of at most `max` characters: line breaks and other control
/// characters are refused, so no value can start a marker line or an instruction of its own
/// where it is quoted into a prompt.
fn check_len(text: &str, max: usize) -> Result<(), String> {
    if text.chars().any(char::is_control) {
        return Err("must be one line, without line breaks or control characters".into());
    }
    let len = text.chars().count();
    if len > max {
        Err(format!("at most {max} characters are allowed, got {len}"))
    } else {
        Ok(())
    }
}

/// The spec's spelling of a choice (matched without regard to ASCII case), or the value itself
/// on an open step.
fn canonical_choice(step: &StepSpec, value: &str) -> Result<String, String> {
    if let Some(choice) = step.choices.iter().find(|c| c.eq_ignore_ascii_case(value)) {
        return Ok(choice.clone());
    }
    if step.open {
        check_len(value, step.max_len.unwrap_or(DEFAULT_MAX_ITEM_LEN))?;
        return Ok(value.to_owned());
    }
    Err(format!(
        "`{value}` is not one of: {}",
        step.choices.join(", ")
    ))
}

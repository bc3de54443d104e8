//! Workflow values as plain JS objects, built by small JS constructors instead of serde: the
//! objects have exactly the shape the core's serde output has (absent optional keys left out),
//! and the shared vectors check them against it. A serializer would link a generic encoder and
//! every type's `Serialize` into the package.

use stepwise_core::workflow::{
    Config, FieldValue, StepKind, StepSpec, WorkflowSpec, WorkflowState,
};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = "
export function step(id, field, kind, required, choices, open, min_items, max_items, max_len, question, guidance) {
  const s = { id };
  if (field !== undefined) s.field = field;
  s.kind = kind;
  s.required = required;
  if (choices.length) s.choices = choices;
  if (open) s.open = true;
  if (min_items !== undefined) s.min_items = min_items;
  if (max_items !== undefined) s.max_items = max_items;
  if (max_len !== undefined) s.max_len = max_len;
  if (question) s.question = question;
  if (guidance) s.guidance = guidance;
  return s;
}
export function spec(id, title, steps) { return { id, title, steps }; }
export function state(current_step, config, skipped) { return { current_step, config, skipped }; }
export function validation(code, message) { return code === undefined ? { ok: true } : { ok: false, error: { code, message } }; }
export function set(object, key, value) { object[key] = value; }
")]
extern "C" {
    #[allow(clippy::too_many_arguments)]
    fn step(
        id: &str,
        field: Option<String>,
        kind: &str,
        required: bool,
        choices: JsValue,
        open: bool,
        min_items: Option<u32>,
        max_items: Option<u32>,
        max_len: Option<u32>,
        question: &str,
        guidance: &str,
    ) -> JsValue;
    fn spec(id: &str, title: &str, steps: JsValue) -> JsValue;
    fn state(current_step: &str, config: JsValue, skipped: JsValue) -> JsValue;
    fn validation(code: Option<String>, message: Option<String>) -> JsValue;
    fn set(object: &JsValue, key: &str, value: &JsValue);
}

/// The steps as `StepSpec[]`.
pub(crate) fn steps_to_js(steps: &[StepSpec]) -> JsValue {
    steps
        .iter()
        .map(step_to_js)
        .collect::<js_sys::Array>()
        .into()
}

fn step_to_js(s: &StepSpec) -> JsValue {
    let count = |n: Option<usize>| n.map(|n| n as u32);
    step(
        &s.id,
        s.field.clone(),
        kind_name(s.kind),
        s.required,
        strings(&s.choices),
        s.open,
        count(s.min_items),
        count(s.max_items),
        count(s.max_len),
        &s.question,
        &s.guidance,
    )
}

/// The spec as `WorkflowSpec`.
pub(crate) fn spec_to_js(workflow: &WorkflowSpec) -> JsValue {
    spec(&workflow.id, &workflow.title, steps_to_js(&workflow.steps))
}

/// The state as `WorkflowState`.
pub(crate) fn state_to_js(workflow_state: &WorkflowState) -> JsValue {
    state(
        &workflow_state.current_step,
        config_to_js(&workflow_state.config),
        strings(&workflow_state.skipped),
    )
}

/// `{ ok: true }`, or `{ ok: false, error: { code, message } }`.
pub(crate) fn validation_to_js(error: Option<(String, String)>) -> JsValue {
    match error {
        Some((code, message)) => validation(Some(code), Some(message)),
        None => validation(None, None),
    }
}

fn config_to_js(config: &Config) -> JsValue {
    let object: JsValue = js_sys::Object::new().into();
    for (field, value) in config.iter() {
        let value = match value {
            FieldValue::Text(text) => JsValue::from_str(text),
            FieldValue::List(items) => strings(items),
        };
        set(&object, field, &value);
    }
    object
}

fn strings(items: &[String]) -> JsValue {
    items
        .iter()
        .map(|s| JsValue::from_str(s))
        .collect::<js_sys::Array>()
        .into()
}

fn kind_name(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Text => "text",
        StepKind::List => "list",
        StepKind::SingleChoice => "single_choice",
        StepKind::MultiChoice => "multi_choice",
        StepKind::Confirm => "confirm",
    }
}

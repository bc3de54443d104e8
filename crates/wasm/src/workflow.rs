//! `Workflow`: a validated workflow spec with step inference and action validation for browsers.

use serde::Serialize;
use stepwise_core::protocol::ErrorBody;
use stepwise_core::workflow::{Config, StepSpec, UserAction, WorkflowSpec, WorkflowState};
use wasm_bindgen::prelude::*;

use crate::error::{INVALID_INPUT, coded_error, from_js, read_js, to_js, unknown_key};

/// What `validateAction` returns: `{ ok: true }` or `{ ok: false, error: { code, message } }`.
#[derive(Serialize)]
struct Validation {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody>,
}

/// A validated workflow spec.
///
/// ```js
/// const workflow = Workflow.builtin("research_stream");
/// const state = { current_step: "stream_type", config: {}, skipped: [] };
/// workflow.validateAction(state, { type: "option_selected", target_field: "stream_type", selected_value: "clinical" });
/// // { ok: true }
/// ```
#[wasm_bindgen]
pub struct Workflow(WorkflowSpec);

#[wasm_bindgen]
impl Workflow {
    /// Loads and validates a spec object; throws an `Error` with code `invalid_spec` or
    /// `invalid_spec_json` (wrong shape) on a bad spec.
    ///
    /// ```js
    /// const workflow = new Workflow({ id: "demo", title: "Demo", steps: [
    ///   { id: "name", field: "name", kind: "text", required: true }, { id: "review", kind: "confirm" }] });
    /// ```
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "WorkflowSpecInput")] spec: JsValue,
    ) -> Result<Workflow, JsValue> {
        let refused = |e: String| coded_error("invalid_spec_json", &format!("workflow spec: {e}"));
        if let Some(unknown) = unknown_spec_key(&spec) {
            return Err(refused(unknown));
        }
        let spec: WorkflowSpec = read_js(spec).map_err(refused)?;
        spec.validate()
            .map_err(|e| coded_error(e.code(), &e.to_string()))?;
        Ok(Workflow(spec))
    }

    /// A built-in spec by id (`"research_stream"`); throws `unknown_workflow` otherwise.
    ///
    /// ```js
    /// const workflow = Workflow.builtin("research_stream");
    /// ```
    pub fn builtin(id: &str) -> Result<Workflow, JsValue> {
        let json = WorkflowSpec::builtin_json(id).ok_or_else(|| {
            coded_error("unknown_workflow", &format!("no built-in workflow `{id}`"))
        })?;
        // The engine's JSON parser reads the spec, so the package carries none of its own.
        let spec = js_sys::JSON::parse(json)
            .unwrap_or_else(|_| wasm_bindgen::throw_str("the built-in specs are JSON"));
        Workflow::new(spec)
    }

    /// The workflow id.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.0.id.clone()
    }

    /// The workflow title.
    #[wasm_bindgen(getter)]
    pub fn title(&self) -> String {
        self.0.title.clone()
    }

    /// The ordered steps, for rendering a progress indicator.
    ///
    /// ```js
    /// workflow.steps().map((s) => s.id); // ["purpose", "business_goals", ..., "review"]
    /// ```
    #[wasm_bindgen(unchecked_return_type = "StepSpec[]")]
    pub fn steps(&self) -> JsValue {
        to_js(&self.0.steps)
    }

    /// The whole spec as plain data.
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "WorkflowSpec")]
    pub fn to_json(&self) -> JsValue {
        to_js(&self.0)
    }

    /// The step a refreshed page should show: the first incomplete step, passing over skipped
    /// optional ones; the review once all are complete; `"done"` once confirmed.
    ///
    /// ```js
    /// workflow.inferStep({ purpose: "Track rivals" }, []); // "business_goals"
    /// ```
    #[wasm_bindgen(js_name = inferStep)]
    pub fn infer_step(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Config")] config: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string[] | undefined")] skipped: JsValue,
        confirmed: Option<bool>,
    ) -> Result<String, JsValue> {
        let config: Config = from_js(config, "config")?;
        let skipped: Vec<String> = if skipped.is_undefined() || skipped.is_null() {
            Vec::new()
        } else {
            from_js(skipped, "skipped")?
        };
        Ok(self
            .0
            .infer_step(&config, &skipped, confirmed.unwrap_or(false))
            .to_owned())
    }

    /// Checks an action against a state without applying it; never throws.
    ///
    /// ```js
    /// workflow.validateAction({ current_step: "focus_areas", config: {} },
    ///   { type: "options_selected", target_field: "focus_areas", selected_values: [] });
    /// // { ok: false, error: { code: "selection_required", message: "At least one selection required for `focus_areas`" } }
    /// ```
    #[wasm_bindgen(js_name = validateAction, unchecked_return_type = "ValidationResult")]
    pub fn validate_action(
        &self,
        #[wasm_bindgen(unchecked_param_type = "WorkflowStateInput")] state: JsValue,
        #[wasm_bindgen(unchecked_param_type = "UserAction")] action: JsValue,
    ) -> JsValue {
        let error = match read_state_and_action(state, action) {
            Err(message) => Some(ErrorBody {
                code: INVALID_INPUT.to_owned(),
                message,
            }),
            Ok((state, action)) => self
                .0
                .apply_action(&state, &action)
                .err()
                .map(|e| ErrorBody {
                    code: e.code().to_owned(),
                    message: e.to_string(),
                }),
        };
        to_js(&Validation {
            ok: error.is_none(),
            error,
        })
    }

    /// Applies an action and returns the new state; throws an `Error` with the rejection's
    /// `code` (and changes nothing) when the action is rejected.
    ///
    /// ```js
    /// const next = workflow.applyAction({ current_step: "stream_type", config: {} },
    ///   { type: "option_selected", target_field: "stream_type", selected_value: "clinical" });
    /// next.config.stream_type; // "clinical"
    /// ```
    #[wasm_bindgen(js_name = applyAction, unchecked_return_type = "WorkflowState")]
    pub fn apply_action(
        &self,
        #[wasm_bindgen(unchecked_param_type = "WorkflowStateInput")] state: JsValue,
        #[wasm_bindgen(unchecked_param_type = "UserAction")] action: JsValue,
    ) -> Result<JsValue, JsValue> {
        let (state, action) =
            read_state_and_action(state, action).map_err(|m| coded_error(INVALID_INPUT, &m))?;
        let (next, _effect) = self
            .0
            .apply_action(&state, &action)
            .map_err(|e| coded_error(e.code(), &e.to_string()))?;
        Ok(to_js(&next))
    }
}

/// A key the spec or one of its steps does not declare: the core refuses those
/// (`deny_unknown_fields`), which serde-wasm-bindgen's struct reader does not see.
fn unknown_spec_key(spec: &JsValue) -> Option<String> {
    if let Some(unknown) = unknown_key::<WorkflowSpec>(spec) {
        return Some(unknown);
    }
    let steps = js_sys::Reflect::get(spec, &JsValue::from_str("steps")).ok()?;
    if !js_sys::Array::is_array(&steps) {
        return None;
    }
    js_sys::Array::from(&steps)
        .iter()
        .enumerate()
        .find_map(|(i, step)| unknown_key::<StepSpec>(&step).map(|e| format!("steps[{i}]: {e}")))
}

fn read_state_and_action(
    state: JsValue,
    action: JsValue,
) -> Result<(WorkflowState, UserAction), String> {
    let state: WorkflowState = read_js(state).map_err(|e| format!("state: {e}"))?;
    let action: UserAction = read_js(action).map_err(|e| format!("action: {e}"))?;
    Ok((state, action))
}

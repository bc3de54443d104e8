//! Workflow state and step inference: where a conversation stands given what it has collected.

use serde::{Deserialize, Serialize};

use super::{ActionError, Config, DONE_STEP, StepKind, WorkflowSpec};

/// What a guided conversation has reached: the step, the collected fields and the skipped ones.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkflowState {
    /// A step id of the spec, or `done`.
    pub current_step: String,
    /// The collected fields.
    #[serde(default)]
    pub config: Config,
    /// Fields of optional steps the user skipped.
    #[serde(default)]
    pub skipped: Vec<String>,
}

impl WorkflowSpec {
    /// The step a conversation with this config should be on (spec edge case 5, refresh
    /// recovery): the first step whose field is missing or invalid, passing over optional steps
    /// the user skipped; the confirm step once every field step is complete; `done` after the
    /// review was confirmed (or when the spec has no confirm step and everything is complete).
    ///
    /// ```
    /// use stepwise_core::workflow::{Config, FieldValue, WorkflowSpec};
    /// let spec = WorkflowSpec::builtin("research_stream").unwrap();
    /// let mut config = Config::new();
    /// config.insert("purpose".into(), FieldValue::Text("Track rivals".into()));
    /// assert_eq!(spec.infer_step(&config, &[], false), "business_goals");
    /// ```
    pub fn infer_step(&self, config: &Config, skipped: &[String], confirmed: bool) -> &str {
        self.first_open_step(0, config, skipped, confirmed)
            .unwrap_or(DONE_STEP)
    }

    /// The step after `current` that still needs the user; if none follows, the earliest open
    /// step of the whole workflow (or `done`).
    pub fn next_step_after(&self, current: &str, config: &Config, skipped: &[String]) -> &str {
        let from = self.step_index(current).map_or(self.steps.len(), |i| i + 1);
        self.first_open_step(from, config, skipped, false)
            .unwrap_or_else(|| self.infer_step(config, skipped, false))
    }

    fn first_open_step(
        &self,
        from: usize,
        config: &Config,
        skipped: &[String],
        confirmed: bool,
    ) -> Option<&str> {
        self.steps.iter().skip(from).find_map(|step| {
            let open = match (&step.field, step.kind) {
                (_, StepKind::Confirm) => !confirmed,
                (Some(field), _) => {
                    !self.is_filled(step, config) && (step.required || !skipped.contains(field))
                }
                (None, _) => false,
            };
            open.then_some(step.id.as_str())
        })
    }

    /// Checks a state carried by a request and returns it normalized (config canonicalized,
    /// skipped fields sorted and unique). An optional step before `current_step` that has no
    /// value counts as skipped: a client that stated its step has passed it (a ChatRequest of
    /// the spec carries no `skipped`). Errors with `unknown_step` or `invalid_config`.
    pub fn normalize_state(&self, state: &WorkflowState) -> Result<WorkflowState, ActionError> {
        if state.current_step != DONE_STEP && self.step(&state.current_step).is_none() {
            return Err(ActionError::UnknownStep(state.current_step.clone()));
        }
        let config = self.normalize_config(&state.config)?;
        let incomplete = state.current_step == DONE_STEP
            && self
                .first_open_step(0, &config, &state.skipped, true)
                .is_some();
        if incomplete {
            return Err(ActionError::InvalidConfig(
                "a workflow can only be done with every required field complete".into(),
            ));
        }
        let mut skipped = Vec::with_capacity(state.skipped.len());
        for field in &state.skipped {
            match self.step_for_field(field) {
                Some(step) if !step.required => skipped.push(field.clone()),
                Some(_) => {
                    return Err(ActionError::InvalidConfig(format!(
                        "required field `{field}` cannot be skipped"
                    )));
                }
                None => {
                    return Err(ActionError::InvalidConfig(format!(
                        "skipped names unknown field `{field}`"
                    )));
                }
            }
        }
        let passed = self
            .step_index(&state.current_step)
            .unwrap_or(self.steps.len());
        for step in &self.steps[..passed] {
            if let Some(field) = &step.field
                && !step.required
                && !self.is_filled(step, &config)
            {
                skipped.push(field.clone());
            }
        }
        skipped.sort_unstable();
        skipped.dedup();
        Ok(WorkflowState {
            current_step: state.current_step.clone(),
            config,
            skipped,
        })
    }
}

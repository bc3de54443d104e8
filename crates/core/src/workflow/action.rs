//! Typed user actions and their application to a workflow state (spec §3, STEP 1, and §4).

use serde::{Deserialize, Serialize};

use super::{ActionError, DONE_STEP, FieldValue, StepKind, StepSpec, WorkflowSpec, WorkflowState};

/// What the user did, as sent by the browser (`type` tag in snake_case). Written by serde's
/// derive; read by a hand-written visitor (`wire.rs`) that rejects unknown fields the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserAction {
    /// Clicked one suggestion chip (Scenario 1).
    OptionSelected {
        /// The field the chip belongs to.
        target_field: String,
        /// The chosen value.
        selected_value: String,
    },
    /// Checked boxes and pressed Continue (Scenario 2).
    OptionsSelected {
        /// The field the checkboxes belong to.
        target_field: String,
        /// Every checked value (the full selection).
        selected_values: Vec<String>,
    },
    /// Typed free text (Scenarios 3 and 6); the model extracts what it can.
    TextInput,
    /// Skipped an optional step (Scenario 5).
    SkipStep {
        /// The field of the step being skipped.
        target_field: String,
    },
    /// Edited a field inline (Scenario 4): no model call and no step change.
    FieldEdit {
        /// The field to change (any field of the spec).
        target_field: String,
        /// The new value.
        value: FieldValue,
    },
    /// Confirmed the configuration at the review step (spec §6, question 4).
    Confirm,
    /// Went back to an earlier step (spec edge case 6).
    GoToStep {
        /// The step to go to.
        step: String,
    },
}

impl UserAction {
    /// The action's `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            UserAction::OptionSelected { .. } => "option_selected",
            UserAction::OptionsSelected { .. } => "options_selected",
            UserAction::TextInput => "text_input",
            UserAction::SkipStep { .. } => "skip_step",
            UserAction::FieldEdit { .. } => "field_edit",
            UserAction::Confirm => "confirm",
            UserAction::GoToStep { .. } => "go_to_step",
        }
    }
}

/// What applying an action did, so the turn knows whether and how to ask the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum ActionEffect {
    /// Free text: the model works on the current step and may extract data.
    AskModel,
    /// A selection completed `field`; the state moved to the next step.
    Completed {
        /// The completed field.
        field: String,
    },
    /// The optional `field` was skipped; the state moved to the next step.
    Skipped {
        /// The skipped field.
        field: String,
    },
    /// `field` was edited in place; no model call is needed.
    FieldEdited {
        /// The edited field.
        field: String,
    },
    /// The review was confirmed; the workflow is done.
    Confirmed,
    /// The conversation went back to `step`.
    WentTo {
        /// The step gone to.
        step: String,
    },
}

impl WorkflowSpec {
    /// Applies an action to a state, following spec §3 STEP 1 and §4. Returns the new state
    /// and what happened; a rejected action returns an error and changes nothing.
    ///
    /// ```
    /// use stepwise_core::workflow::{UserAction, WorkflowSpec, WorkflowState, FieldValue};
    /// let spec = WorkflowSpec::builtin("research_stream").unwrap();
    /// let state = WorkflowState { current_step: "stream_type".into(), ..Default::default() };
    /// let pick = UserAction::OptionSelected {
    ///     target_field: "stream_type".into(),
    ///     selected_value: "Competitive".into(),
    /// };
    /// let (next, _) = spec.apply_action(&state, &pick).unwrap();
    /// assert_eq!(next.config["stream_type"], FieldValue::Text("competitive".into()));
    /// assert_eq!(next.current_step, "focus_areas");
    /// ```
    pub fn apply_action(
        &self,
        state: &WorkflowState,
        action: &UserAction,
    ) -> Result<(WorkflowState, ActionEffect), ActionError> {
        let mut state = self.normalize_state(state)?;
        let effect = match action {
            UserAction::TextInput => ActionEffect::AskModel,
            UserAction::OptionSelected {
                target_field,
                selected_value,
            } => {
                let step = self.current_field_step(&state, target_field)?;
                let value = match step.kind {
                    StepKind::List | StepKind::MultiChoice => {
                        let mut items = match state.config.get(target_field) {
                            Some(FieldValue::List(items)) => items.clone(),
                            _ => Vec::new(),
                        };
                        items.push(selected_value.clone());
                        FieldValue::List(items)
                    }
                    _ => FieldValue::Text(selected_value.clone()),
                };
                self.set_field(&mut state, step, &value)?;
                self.advance(
                    &mut state,
                    ActionEffect::Completed {
                        field: target_field.clone(),
                    },
                )
            }
            UserAction::OptionsSelected {
                target_field,
                selected_values,
            } => {
                let step = self.current_field_step(&state, target_field)?;
                if !step.kind.is_list() {
                    return Err(ActionError::InvalidValue {
                        field: target_field.clone(),
                        reason: "takes one value; send option_selected".into(),
                    });
                }
                if selected_values.iter().all(|v| v.trim().is_empty()) {
                    if step.required {
                        return Err(ActionError::SelectionRequired(target_field.clone()));
                    }
                    state.config.remove(target_field);
                    mark_skipped(&mut state, target_field);
                    self.advance(
                        &mut state,
                        ActionEffect::Skipped {
                            field: target_field.clone(),
                        },
                    )
                } else {
                    self.set_field(&mut state, step, &FieldValue::List(selected_values.clone()))?;
                    self.advance(
                        &mut state,
                        ActionEffect::Completed {
                            field: target_field.clone(),
                        },
                    )
                }
            }
            UserAction::SkipStep { target_field } => {
                let step = self.current_field_step(&state, target_field)?;
                if step.required {
                    return Err(ActionError::StepRequired {
                        step: step.id.clone(),
                        optional: false,
                    });
                }
                // Spec §3: a skipped field is left empty.
                state.config.remove(target_field);
                mark_skipped(&mut state, target_field);
                self.advance(
                    &mut state,
                    ActionEffect::Skipped {
                        field: target_field.clone(),
                    },
                )
            }
            UserAction::FieldEdit {
                target_field,
                value,
            } => {
                let step = self
                    .step_for_field(target_field)
                    .ok_or_else(|| ActionError::UnknownField(target_field.clone()))?;
                self.set_field(&mut state, step, value)?;
                ActionEffect::FieldEdited {
                    field: target_field.clone(),
                }
            }
            UserAction::Confirm => {
                let at_review = self
                    .step(&state.current_step)
                    .is_some_and(|s| s.kind == StepKind::Confirm);
                if !at_review {
                    return Err(ActionError::NotAtReview(state.current_step.clone()));
                }
                let open = self.infer_step(&state.config, &state.skipped, false);
                if open != state.current_step {
                    return Err(self.step_required(open));
                }
                state.current_step = DONE_STEP.to_owned();
                ActionEffect::Confirmed
            }
            UserAction::GoToStep { step } => {
                let target = self
                    .step_index(step)
                    .ok_or_else(|| ActionError::UnknownStep(step.clone()))?;
                let open = self.infer_step(&state.config, &state.skipped, false);
                // Going back is always allowed; going forward only up to the first open step.
                if self
                    .step_index(open)
                    .is_some_and(|first_open| target > first_open)
                {
                    return Err(self.step_required(open));
                }
                if let Some(field) = &self.steps[target].field {
                    state.skipped.retain(|f| f != field);
                }
                state.current_step = step.clone();
                ActionEffect::WentTo { step: step.clone() }
            }
        };
        Ok((state, effect))
    }

    /// The current step, provided `target_field` is its field (edge case 4).
    fn current_field_step(
        &self,
        state: &WorkflowState,
        target_field: &str,
    ) -> Result<&StepSpec, ActionError> {
        match self.step(&state.current_step) {
            Some(step) if step.field.as_deref() == Some(target_field) => Ok(step),
            _ if self.step_for_field(target_field).is_none() => {
                Err(ActionError::UnknownField(target_field.to_owned()))
            }
            _ => Err(ActionError::FieldMismatch {
                target: target_field.to_owned(),
                step: state.current_step.clone(),
            }),
        }
    }

    /// Validates and stores a value; an empty value for a required field is refused.
    fn set_field(
        &self,
        state: &mut WorkflowState,
        step: &StepSpec,
        value: &FieldValue,
    ) -> Result<(), ActionError> {
        let field = step.field.clone().expect("only field steps are set");
        let value = self.normalize_value(step, value)?;
        if value.is_empty() {
            if step.required {
                return Err(match value {
                    FieldValue::List(_) => ActionError::SelectionRequired(field),
                    FieldValue::Text(_) => ActionError::InvalidValue {
                        field,
                        reason: "a value is required".into(),
                    },
                });
            }
            state.config.remove(&field);
        } else {
            state.skipped.retain(|f| *f != field);
            state.config.insert(field, value);
        }
        Ok(())
    }

    /// The error for a step that still needs the user, worded by whether it is optional.
    fn step_required(&self, step: &str) -> ActionError {
        ActionError::StepRequired {
            step: step.to_owned(),
            optional: self.step(step).is_some_and(|s| !s.required),
        }
    }

    fn advance(&self, state: &mut WorkflowState, effect: ActionEffect) -> ActionEffect {
        state.current_step = self
            .next_step_after(&state.current_step, &state.config, &state.skipped)
            .to_owned();
        effect
    }
}

fn mark_skipped(state: &mut WorkflowState, field: &str) {
    if !state.skipped.iter().any(|f| f == field) {
        state.skipped.push(field.to_owned());
        state.skipped.sort_unstable();
    }
}

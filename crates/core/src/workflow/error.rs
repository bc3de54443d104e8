//! Typed errors of the workflow module: invalid specs and rejected user actions.

use thiserror::Error;

/// Why a workflow spec was refused on load.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The text is not JSON of the spec's shape.
    #[error("workflow spec is not valid JSON of the expected shape: {0}")]
    Json(String),
    /// The spec declares no step.
    #[error("workflow spec has no steps")]
    NoSteps,
    /// The spec declares more steps than allowed.
    #[error("workflow spec has {0} steps; at most 64 are allowed")]
    TooManySteps(usize),
    /// An id or field name is empty, too long or uses characters outside `[A-Za-z0-9_]`.
    #[error("{what} `{name}` must be 1 to 64 characters of A-Z, a-z, 0-9 and _")]
    InvalidName {
        /// Which kind of name.
        what: &'static str,
        /// The offending name.
        name: String,
    },
    /// A step uses the reserved id `done`.
    #[error("step id `{0}` is reserved")]
    ReservedStepId(String),
    /// Two steps share an id.
    #[error("step id `{0}` is used twice")]
    DuplicateStepId(String),
    /// Two steps fill the same field.
    #[error("field `{0}` is filled by two steps")]
    DuplicateField(String),
    /// A non-confirm step has no field.
    #[error("step `{0}` needs a `field`")]
    MissingField(String),
    /// A confirm step names a field.
    #[error("confirm step `{0}` must not have a `field`")]
    ConfirmWithField(String),
    /// A confirm step is not the last step.
    #[error("confirm step `{0}` must be the last step")]
    ConfirmNotLast(String),
    /// A choice step has no choices.
    #[error("choice step `{0}` needs `choices`")]
    MissingChoices(String),
    /// A choice step declares too many choices.
    #[error("step `{0}` has more than 64 choices")]
    TooManyChoices(String),
    /// A non-choice step declares choices or `open`.
    #[error("step `{0}` is not a choice step; `choices` and `open` do not apply")]
    UnexpectedChoices(String),
    /// A choice is empty, padded, too long or contains `,`, `|` or a line break.
    #[error(
        "step `{step}` has an invalid choice `{choice}` (1-64 characters, no `,` `|` or line breaks)"
    )]
    InvalidChoice {
        /// The step.
        step: String,
        /// The offending choice.
        choice: String,
    },
    /// A choice appears twice (case-insensitively).
    #[error("step `{step}` lists choice `{choice}` twice")]
    DuplicateChoice {
        /// The step.
        step: String,
        /// The repeated choice.
        choice: String,
    },
    /// Limits that contradict each other or the step kind.
    #[error("step `{step}`: {reason}")]
    InvalidLimits {
        /// The step.
        step: String,
        /// What is wrong.
        reason: &'static str,
    },
}

impl SpecError {
    /// Stable machine code for the wire.
    pub fn code(&self) -> &'static str {
        match self {
            SpecError::Json(_) => "invalid_spec_json",
            _ => "invalid_spec",
        }
    }
}

/// Why a user action, or the state it was applied to, was rejected. Nothing changes on rejection.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ActionError {
    /// The action targets a field other than the current step's.
    #[error("`{target}` is not the field of the current step `{step}`")]
    FieldMismatch {
        /// The field the action named.
        target: String,
        /// The current step.
        step: String,
    },
    /// The value does not fit the field (not a choice, too long, wrong shape, too many items).
    #[error("invalid value for `{field}`: {reason}")]
    InvalidValue {
        /// The field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// An empty selection for a required field.
    #[error("At least one selection required for `{0}`")]
    SelectionRequired(String),
    /// A skip of a required step, or a jump forward past a step that still needs the user (a
    /// required step to fill, or an optional one to answer or skip).
    #[error("step `{step}` {}", if *optional { "must be answered or skipped first" } else { "is required and cannot be skipped" })]
    StepRequired {
        /// The step.
        step: String,
        /// Whether the step is optional (so the message never calls it required).
        optional: bool,
    },
    /// The action names a field the workflow does not have.
    #[error("unknown field `{0}`")]
    UnknownField(String),
    /// The request names a step the workflow does not have.
    #[error("unknown step `{0}`")]
    UnknownStep(String),
    /// A confirm outside the review step.
    #[error("confirm is only possible at the review step; the current step is `{0}`")]
    NotAtReview(String),
    /// The config carried by the request breaks the spec.
    #[error("the current config is invalid: {0}")]
    InvalidConfig(String),
    /// The user's message is longer than the server accepts.
    #[error("the message is longer than {limit} characters")]
    MessageTooLong {
        /// The limit, in characters.
        limit: usize,
    },
}

impl ActionError {
    /// Stable machine code for the wire.
    pub fn code(&self) -> &'static str {
        match self {
            ActionError::FieldMismatch { .. } => "field_mismatch",
            ActionError::InvalidValue { .. } => "invalid_value",
            ActionError::SelectionRequired(_) => "selection_required",
            ActionError::StepRequired { .. } => "step_required",
            ActionError::UnknownField(_) => "unknown_field",
            ActionError::UnknownStep(_) => "unknown_step",
            ActionError::NotAtReview(_) => "not_at_review",
            ActionError::InvalidConfig(_) => "invalid_config",
            ActionError::MessageTooLong { .. } => "message_too_long",
        }
    }
}

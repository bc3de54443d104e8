//! Guided workflows (guided-workflow.md): specs, collected config, step inference and user actions.

mod action;
mod config;
mod error;
mod field_map;
mod spec;
mod state;
mod wire;

pub use action::{ActionEffect, UserAction};
pub use config::{DEFAULT_MAX_ITEM_LEN, DEFAULT_MAX_ITEMS, DEFAULT_MAX_TEXT_LEN, FieldValue};
pub use error::{ActionError, SpecError};
pub use field_map::{Config, MAX_CONFIG_FIELDS};
pub use spec::{
    DONE_STEP, MAX_CHOICES, MAX_ITEMS_LIMIT, MAX_NAME_LEN, MAX_STEPS, StepKind, StepSpec,
    WorkflowSpec,
};
pub use state::WorkflowState;

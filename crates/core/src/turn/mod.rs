//! One chat turn as a sans-IO machine (guided-workflow.md §3): [`begin`] processes the user's
//! action before any model call; the driver calls the model and parses its reply; [`finish`]
//! applies what the model extracted and decides the next step.

mod finish;
mod prompt;

use serde::{Deserialize, Serialize};

pub use finish::{TurnNote, TurnOutcome, finish};

use crate::conversation::GuidedState;
use crate::protocol::{ChatMessage, ChatRequest, ChatResponse, ErrorBody, Role};
use crate::workflow::{
    ActionEffect, ActionError, DONE_STEP, UserAction, WorkflowSpec, WorkflowState,
};

/// Default budget of conversation history sent to the model, in characters.
pub const DEFAULT_HISTORY_BUDGET: usize = 24_000;
/// Default longest user message, in characters.
pub const DEFAULT_MAX_MESSAGE_CHARS: usize = 8_000;

/// Tunables of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnOptions {
    /// Most characters of earlier messages sent to the model; the oldest are dropped first.
    pub history_budget: usize,
    /// Longest user message, in characters; a longer one is rejected (`message_too_long`).
    pub max_message_chars: usize,
}

impl Default for TurnOptions {
    fn default() -> Self {
        TurnOptions {
            history_budget: DEFAULT_HISTORY_BUDGET,
            max_message_chars: DEFAULT_MAX_MESSAGE_CHARS,
        }
    }
}

/// What to do after [`begin`].
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // returned once per turn, never stored in bulk
pub enum TurnStart {
    /// Answer at once, with no model call: an inline edit.
    Respond(ChatResponse),
    /// Call the model as planned, then [`finish`].
    CallModel(TurnPlan),
}

/// A turn whose action (or the state it came with) was rejected: nothing changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// Why, with its stable code.
    pub error: ActionError,
    /// The response to send: the state exactly as it came, with the error's code and message.
    pub response: ChatResponse,
}

/// The model call a turn needs, and what [`finish`] needs to complete it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnPlan {
    /// The step whose context the model gets (already advanced past a completed selection).
    pub step: String,
    /// The state after the user's action.
    pub state: WorkflowState,
    /// What the user's action did.
    pub effect: ActionEffect,
    /// The system prompt: step guidance, config so far and marker instructions.
    pub system_prompt: String,
    /// The messages to send: trimmed history, then the user's message.
    pub messages: Vec<ChatMessage>,
    /// The conversation id from the request.
    pub conversation_id: Option<String>,
}

/// Checks what a turn's request is judged on before any state: its message's length
/// (`message_too_long` past `options.max_message_chars`). A message that waits behind a running
/// turn is checked with this before it waits; [`begin_with`] checks it again.
pub fn message_within(request: &ChatRequest, options: TurnOptions) -> Result<(), ActionError> {
    let limit = options.max_message_chars;
    match request.message.chars().count() > limit {
        true => Err(ActionError::MessageTooLong { limit }),
        false => Ok(()),
    }
}

/// Starts a turn with default options.
#[allow(clippy::result_large_err)] // returned once per turn, never stored in bulk
pub fn begin(spec: &WorkflowSpec, request: &ChatRequest) -> Result<TurnStart, Rejection> {
    begin_with(spec, request, TurnOptions::default())
}

/// Starts a turn: validates the carried state and the action (absent = `text_input`), applies it
/// and returns the response to send at once or the model call to make; a rejected action is a
/// [`Rejection`].
#[allow(clippy::result_large_err)] // returned once per turn, never stored in bulk
pub fn begin_with(
    spec: &WorkflowSpec,
    request: &ChatRequest,
    options: TurnOptions,
) -> Result<TurnStart, Rejection> {
    let state = request_state(spec, request);
    let action = request.user_action.clone().unwrap_or(UserAction::TextInput);
    let applied = match message_within(request, options) {
        Err(error) => Err(error),
        Ok(()) => spec.apply_action(&state, &action),
    };
    match applied {
        Err(error) => Err(Rejection {
            response: reject(request, &state.current_step, &error),
            error,
        }),
        Ok((state, ActionEffect::FieldEdited { .. })) => Ok(TurnStart::Respond(ChatResponse {
            next_step: state.current_step,
            updated_config: state.config,
            skipped: state.skipped,
            conversation_id: request.conversation_id.clone(),
            ..ChatResponse::default()
        })),
        Ok((state, effect)) => {
            let system_prompt = prompt::system_prompt(spec, &state, &effect, &action);
            let mut messages = trim_history(&request.conversation_history, options.history_budget);
            let content = if request.message.trim().is_empty() {
                prompt::describe_action(&effect)
            } else {
                request.message.clone()
            };
            messages.push(ChatMessage::new(Role::User, content));
            Ok(TurnStart::CallModel(TurnPlan {
                step: state.current_step.clone(),
                state,
                effect,
                system_prompt,
                messages,
                conversation_id: request.conversation_id.clone(),
            }))
        }
    }
}

/// The state a request carries; a missing `current_step` is inferred from the config. A request
/// that starts a conversation cannot claim it `done`: only the confirm action ends a workflow,
/// so such a claim with a complete config counts as the step inferred from it (the review); with
/// an incomplete one it is refused (`invalid_config`), as any state claiming `done` is. A request that continues a conversation carries the state stored with it
/// ([`with_stored_state`]), which reached `done` by its confirm.
fn request_state(spec: &WorkflowSpec, request: &ChatRequest) -> WorkflowState {
    let claimed = request.current_step.as_deref();
    let complete = || spec.infer_step(&request.current_config, &request.skipped, true) == DONE_STEP;
    let current_step = match claimed {
        // (An incomplete one stays `done`, and is refused as `invalid_config`.)
        Some(DONE_STEP) if request.conversation_id.is_none() && complete() => None,
        claimed => claimed,
    };
    let current_step = match current_step {
        Some(step) => step.to_owned(),
        None => spec
            .infer_step(&request.current_config, &request.skipped, false)
            .to_owned(),
    };
    WorkflowState {
        current_step,
        config: request.current_config.clone(),
        skipped: request.skipped.clone(),
    }
}

/// The request with the state the server stored for its conversation in place of the state it
/// carried (step, fields, skipped fields and history): a continuing turn builds on what the
/// server validated and stored, never on what a client says it was. The message, the action
/// and everything else stay as sent.
///
/// ```
/// use stepwise_core::conversation::GuidedState;
/// use stepwise_core::protocol::ChatRequest;
/// use stepwise_core::turn::with_stored_state;
/// let request: ChatRequest = serde_json::from_value(serde_json::json!({
///     "message": "Next", "current_step": "done", "current_config": {"stream_name": "Forged"},
///     "conversation_id": "0123456789abcdef0123456789abcdef", "turns": 1
/// })).unwrap();
/// let stored = GuidedState { workflow: "research_stream".into(), current_step: "purpose".into(), ..GuidedState::default() };
/// let trusted = with_stored_state(&request, &stored);
/// assert_eq!(trusted.current_step.as_deref(), Some("purpose"));
/// assert!(trusted.current_config.is_empty());
/// assert_eq!(trusted.message, "Next");
/// ```
pub fn with_stored_state(request: &ChatRequest, stored: &GuidedState) -> ChatRequest {
    ChatRequest {
        current_step: Some(stored.current_step.clone()),
        current_config: stored.current_config.clone(),
        skipped: stored.skipped.clone(),
        conversation_history: stored.conversation_history.clone(),
        ..request.clone()
    }
}

/// The response to a rejected request: the error, and the state exactly as it came.
pub fn reject(request: &ChatRequest, current_step: &str, error: &ActionError) -> ChatResponse {
    ChatResponse {
        next_step: current_step.to_owned(),
        updated_config: request.current_config.clone(),
        skipped: request.skipped.clone(),
        error: Some(ErrorBody {
            code: error.code().to_owned(),
            message: error.to_string(),
        }),
        conversation_id: request.conversation_id.clone(),
        ..ChatResponse::default()
    }
}

/// The most recent messages whose contents fit in `budget` characters, oldest first.
pub fn trim_history(history: &[ChatMessage], budget: usize) -> Vec<ChatMessage> {
    let mut used = 0usize;
    let keep = history
        .iter()
        .rev()
        .take_while(|m| {
            used += m.content.chars().count();
            used <= budget
        })
        .count();
    history[history.len() - keep..].to_vec()
}

//! `guided_configure` over MCP: a guided workflow (its spec as the app loads it, a KV override
//! or the built-in) walked with the person one elicitation form per step (`core::mcp::guided`),
//! each answer applied by the core as the app's would be; a refused answer is asked again with
//! the reason (three times at most), a declined form stops the walk with nothing saved, and the
//! confirmed configuration is the result. Nothing is stored: the walk is the call's.

use std::rc::Rc;

use serde_json::json;
use stepwise_core::mcp::guided::{StepAnswer, read_step, step_request, summary};
use stepwise_core::mcp::jsonrpc::RequestId;
use stepwise_core::workflow::{DONE_STEP, WorkflowState};
use worker::{Env, Response};

use super::person::{Waiting, ask_person, streamed, tool_error};
use crate::platform::error::AppResult;
use crate::platform::kv::Kv;
use crate::workflows::store as workflows;

/// Times one step is asked at most (the first time, and again after refused answers).
const MAX_TRIES: usize = 3;

/// Answers the `tools/call` request `id` (a client that answers elicitation and takes a
/// stream): an SSE response asking each step, ending with the configuration.
pub fn run_streamed(
    env: Env,
    waiting: Rc<Waiting>,
    id: RequestId,
    workflow: String,
) -> AppResult<Response> {
    let call = id.clone();
    streamed(&Rc::clone(&waiting), id, move |sink| async move {
        let spec = workflows::load(&Kv::new(&env)?, &workflow).await?;
        let mut state = WorkflowState {
            current_step: spec.infer_step(&Default::default(), &[], false).to_owned(),
            ..WorkflowState::default()
        };
        let mut forms = 0;
        while state.current_step != DONE_STEP {
            let Some(step) = spec.step(&state.current_step).cloned() else {
                let text = format!("The workflow has no step `{}`.", state.current_step);
                return Ok(tool_error(&text));
            };
            let mut refused: Option<String> = None;
            let mut tries = 0;
            loop {
                tries += 1;
                forms += 1;
                let params = step_request(&spec, &step, &state.config, refused.as_deref());
                let answer = ask_person(&waiting, &sink, &call, params).await?;
                let action = match read_step(&step, &answer) {
                    StepAnswer::Act(action) => action,
                    StepAnswer::Stop => {
                        let text = format!(
                            "Stopped at step {}: nothing was saved. So far:\n{}",
                            step.id,
                            summary(&spec, &state.config)
                        );
                        return Ok(json!({"content": [{"type": "text", "text": text}],
                            "structuredContent": {"workflow": spec.id, "completed": false, "stopped_at": step.id,
                                "config": state.config, "skipped": state.skipped}}));
                    }
                    StepAnswer::Invalid(why) => {
                        refused = Some(why);
                        if tries >= MAX_TRIES {
                            break;
                        }
                        continue;
                    }
                };
                match spec.apply_action(&state, &action) {
                    Ok((next, _)) => {
                        state = next;
                        break;
                    }
                    Err(error) if tries < MAX_TRIES => refused = Some(error.to_string()),
                    Err(error) => {
                        let text = format!(
                            "Step {} was refused {MAX_TRIES} times ({error}); nothing was saved.",
                            step.id
                        );
                        return Ok(tool_error(&text));
                    }
                }
            }
            if state.current_step == step.id && tries >= MAX_TRIES {
                let text = format!("Step {} got no usable answer; nothing was saved.", step.id);
                return Ok(tool_error(&text));
            }
        }
        let text = format!(
            "Configured “{}”:\n{}",
            spec.title,
            summary(&spec, &state.config)
        );
        Ok(json!({"content": [{"type": "text", "text": text}],
            "structuredContent": {"workflow": spec.id, "completed": true, "config": state.config,
                "skipped": state.skipped, "forms": forms}}))
    })
}

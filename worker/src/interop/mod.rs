//! Other ecosystems at the edge: `POST /api/agui` (a guided or an assistant turn spoken as
//! AG-UI events). The
//! AI SDK's UI message stream needs no route of its own: `POST /api/chat` and
//! `POST /api/assistant` speak it when asked (`x-stepwise-format: ui-message-stream`,
//! platform/negotiate.rs), and the contract `/openapi.yaml` is a static asset (www/dist).

use stepwise_core::interop::agui::{RunAgentInput, RunRequest, run_input};
use worker::{Context, Env, Request, Response};

use crate::assistant::approvals::{Decided, decide_as};
use crate::assistant::{AssistantMessage, post_message};
use crate::chat::conversation::TOKEN_HEADER;
use crate::chat::run_turn;
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::negotiate::Delivery;
use crate::platform::owner::Owner;

/// `POST /api/agui`: runs the turn a `RunAgentInput` asks for and streams it as AG-UI events: a
/// guided turn (its last user message, `state` as `{current_step, config, skipped}`, Stepwise's
/// own fields in `forwardedProps`; a continued conversation sends `X-Conversation-Token`), or,
/// with `forwardedProps.agent` = `"assistant"`, an assistant turn on the page in
/// `forwardedProps.context`, its tool calls as `TOOL_CALL_*`. A run that ends with a tool call
/// held for approval finishes with an interrupt outcome; the next run's `resume` entry decides it
/// (`{approved, reason?, editedArgs?}`; `cancelled` denies). Input that is not a turn is
/// refused (422) before anything runs.
pub async fn post_agui(
    mut req: Request,
    env: Env,
    ctx: &Context,
    owner: &Owner,
) -> AppResult<Response> {
    let token = req.headers().get(TOKEN_HEADER)?;
    let input: RunAgentInput = read_json(&mut req).await?;
    let request = run_input(&input).map_err(|error| AppError::invalid_request(error.0))?;
    let reply = Delivery::AgUi {
        thread_id: input.thread_id,
        run_id: input.run_id,
    };
    match request {
        RunRequest::Guided(request) => run_turn(request, token, reply, env, ctx, owner).await,
        RunRequest::Assistant(run) => {
            let message = AssistantMessage {
                conversation_id: run.conversation_id,
                message: run.message,
                context: run.context,
                provider: run.provider,
                writing_style: None,
            };
            post_message(message, reply, env, owner).await
        }
        RunRequest::Resume(run) => {
            let decided = Decided {
                approve: run.approved,
                arguments: run.arguments,
                reason: run.reason,
                context: run.context,
            };
            let (id, approval) = (run.conversation_id, run.approval_id);
            decide_as(env, owner, &id, &approval, decided, reply).await
        }
    }
}

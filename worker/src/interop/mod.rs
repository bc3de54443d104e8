//! Other ecosystems at the edge: `POST /api/agui` (a guided turn spoken as AG-UI events). The
//! AI SDK's UI message stream needs no route of its own: `POST /api/chat` and
//! `POST /api/assistant` speak it when asked (`x-stepwise-format: ui-message-stream`,
//! platform/negotiate.rs), and the contract `/openapi.yaml` is a static asset (www/dist).

use stepwise_core::interop::agui::{RunAgentInput, run_input};
use worker::{Context, Env, Request, Response};

use crate::chat::conversation::TOKEN_HEADER;
use crate::chat::{Reply, run_turn};
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;

/// `POST /api/agui`: runs the guided turn a `RunAgentInput` asks for (its last user message,
/// `state` as `{current_step, config, skipped}`, Stepwise's own fields in `forwardedProps`) and
/// streams it as AG-UI events. A continued conversation sends `X-Conversation-Token`. Input
/// that is not a turn is refused (422) before anything runs.
pub async fn post_agui(
    mut req: Request,
    env: Env,
    ctx: &Context,
    owner: &Owner,
) -> AppResult<Response> {
    let token = req.headers().get(TOKEN_HEADER)?;
    let input: RunAgentInput = read_json(&mut req).await?;
    let request = run_input(&input).map_err(|error| AppError::invalid_request(error.0))?;
    let reply = Reply::AgUi {
        thread_id: input.thread_id,
        run_id: input.run_id,
    };
    run_turn(request, token, reply, env, ctx, owner).await
}

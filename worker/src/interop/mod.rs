//! Other ecosystems at the edge: `POST /api/agui` (a guided or an assistant turn spoken as
//! AG-UI events). The
//! AI SDK's UI message stream needs no route of its own: `POST /api/chat` and
//! `POST /api/assistant` speak it when asked (`x-stepwise-format: ui-message-stream`,
//! platform/negotiate.rs), and the contract `/openapi.yaml` is a static asset (www/dist).

use stepwise_core::interop::agui::{ResumeAnswer, ResumeRun, RunAgentInput, RunRequest, run_input};
use worker::{Env, Request, Response};

use crate::assistant::approvals::{Decided, decide_as};
use crate::assistant::deferred;
use crate::assistant::host::DeliveryOrder;
use crate::assistant::{AssistantMessage, post_message};
use crate::chat::conversation::TOKEN_HEADER;
use crate::chat::run_turn;
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::limits;
use crate::platform::negotiate::Delivery;
use crate::platform::owner::Owner;

/// `POST /api/agui`: runs the turn a `RunAgentInput` asks for and streams it as AG-UI events: a
/// guided turn (its last user message, `state` as `{current_step, config, skipped}`, Stepwise's
/// own fields in `forwardedProps`; a continued conversation sends `X-Conversation-Token`), or,
/// with `forwardedProps.agent` = `"assistant"`, an assistant turn on the page in
/// `forwardedProps.context`, its tool calls as `TOOL_CALL_*`. A run that ends with a tool call
/// held for approval, or deferred by a context request, finishes with an interrupt outcome; the
/// next run's `resume` entry answers it: an approval `{approved, reason?, editedArgs?}`
/// (`cancelled` denies), a context request (interrupt id `context:<request id>`) `{payloads?,
/// skip?}` (`cancelled` runs without it). Input that is not a turn is refused (422) before
/// anything runs.
pub async fn post_agui(mut req: Request, env: Env, owner: &Owner) -> AppResult<Response> {
    // Admitted here (the router leaves this route to it): every run is rate limited before it
    // is read; the kill switch is judged once it is, since a run that denies an approval calls
    // no model and must pass while model calls are off, as the HTTP route's denial does.
    limits::rate_limit(&req, &env, owner).await?;
    let token = req.headers().get(TOKEN_HEADER)?;
    let input: RunAgentInput = read_json(&mut req).await?;
    let request = run_input(&input).map_err(|error| AppError::invalid_request(error.0))?;
    let denies = matches!(
        &request,
        RunRequest::Resume(ResumeRun {
            answer: ResumeAnswer::Approval {
                approved: false,
                ..
            },
            ..
        })
    );
    if !denies && limits::calls_disabled(&env) {
        return Err(AppError::model_calls_disabled());
    }
    let reply = Delivery::AgUi {
        thread_id: input.thread_id,
        run_id: input.run_id,
    };
    match request {
        RunRequest::Guided(request) => run_turn(request, token, reply, env, owner).await,
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
        RunRequest::Resume(run) => resume(run, reply, env, owner).await,
    }
}

/// Answers the interrupt a run resumes: decides an approval, or supplies, skips or runs without
/// a context request; the turn that follows streams to the run.
async fn resume(run: ResumeRun, reply: Delivery, env: Env, owner: &Owner) -> AppResult<Response> {
    let id = run.conversation_id;
    match run.answer {
        ResumeAnswer::Approval {
            approval_id,
            approved,
            arguments,
            reason,
        } => {
            let decided = Decided {
                approve: approved,
                arguments,
                reason,
                context: run.context,
            };
            decide_as(env, owner, &id, &approval_id, decided, reply).await
        }
        ResumeAnswer::Context {
            request_id,
            run_without: true,
            ..
        } => deferred::force_as(&env, owner, &id, &request_id, DeliveryOrder::of(reply)).await,
        ResumeAnswer::Context {
            request_id,
            payloads,
            skip,
            ..
        } => {
            let payloads = payloads
                .into_iter()
                .map(serde_json::from_value)
                .collect::<Result<Vec<deferred::Payload>, _>>()
                .map_err(|error| {
                    AppError::invalid_request(format!("a payload of `resume`: {error}"))
                })?;
            let body = deferred::SupplyBody {
                conversation_id: id,
                request_id,
                payloads,
                skip,
            };
            deferred::supply_as(&env, owner, body, DeliveryOrder::of(reply)).await
        }
    }
}

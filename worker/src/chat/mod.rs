//! Guided chat (guided-workflow.md) at the edge: `POST /api/chat` (a turn, SSE by default or one
//! JSON answer with `Accept: application/json`), `PUT /api/chat/update-field` (an inline edit,
//! no model call) and `GET /api/conversations/:id` (the last snapshot, for refresh recovery).

mod conversation;
mod output;
mod turn;

use futures_channel::mpsc;
use serde::Deserialize;
use stepwise_core::llm::ProviderKind;
use stepwise_core::protocol::ChatRequest;
use stepwise_core::spend::{Charge, estimate_tokens};
use stepwise_core::turn::{self as core_turn, TurnStart};
use stepwise_core::workflow::{ActionError, Config, FieldValue, UserAction, WorkflowState};
use worker::{Context, Env, Request, Response, console_warn};

use self::conversation::{Conversation, TOKEN_HEADER};
use self::output::Output;
use self::turn::Turn;
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::negotiate::wants_json;
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;
use crate::platform::spend;
use crate::platform::sse;
use crate::workflows::store as workflows;

/// The workflow used when a request names none.
const DEFAULT_WORKFLOW: &str = "research_stream";
/// The request header asking for `model_delta` events (value `model`) instead of `text_delta`.
const DELTAS_HEADER: &str = "x-stepwise-deltas";

/// `POST /api/chat`: an owner's turn. Refused before any model call when the kill switch is on
/// (503), a rate limit or a daily cap is reached (429), or the message is too long (422).
pub async fn post_turn(
    mut req: Request,
    env: Env,
    ctx: &Context,
    owner: &Owner,
) -> AppResult<Response> {
    let settings = Settings::from_env(&env)?;
    let kv = Kv::new(&env)?;
    let json_mode = wants_json(&req)?;
    let token = req.headers().get(TOKEN_HEADER)?;
    let request: ChatRequest = read_json(&mut req).await?;
    let provider = match request.provider.as_deref() {
        Some(name) => settings.providers.get(name),
        None => Some(settings.providers.chat_provider()),
    }
    .cloned()
    .ok_or_else(|| AppError::unknown_provider(request.provider.as_deref().unwrap_or("")))?;
    let workflow = request.workflow.as_deref().unwrap_or(DEFAULT_WORKFLOW);
    let spec = workflows::load(&kv, workflow).await?;
    let conversation = open(&kv, owner, request.conversation_id.as_deref(), token).await?;
    let start =
        core_turn::begin_with(&spec, &request, settings.turn_options()).map_err(|rejection| {
            warn_on_mismatch(&rejection.error);
            AppError::from(rejection.error)
        })?;
    if let TurnStart::CallModel(plan) = &start
        && provider.kind != ProviderKind::Offline
    {
        let prompt =
            plan.system_prompt.len() + plan.messages.iter().map(|m| m.content.len()).sum::<usize>();
        let charge = Charge {
            calls: 1,
            tokens: estimate_tokens(prompt, settings.max_tokens),
        };
        spend::charge(&env, owner, charge).await?;
    }
    let turn = Turn {
        owner: owner.clone(),
        spec,
        provider,
        request,
        conversation,
        settings,
        env,
    };
    if json_mode {
        let mut out = Output::json();
        let persisted = turn.run(start, &mut out).await;
        return out.into_json_response(persisted);
    }
    let model_deltas = req
        .headers()
        .get(DELTAS_HEADER)?
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("model"));
    let (sender, receiver) = mpsc::channel::<worker::Result<Vec<u8>>>(32);
    ctx.wait_until(async move {
        let mut out = Output::sse(sender, model_deltas);
        // A `status` event already told the client if the turn was not stored.
        turn.run(start, &mut out).await;
    });
    Ok(sse::response(receiver)?)
}

/// Spec edge case 4: an action aimed at another step's field is logged as a warning, since it
/// means the client's idea of the step drifted from the server's.
fn warn_on_mismatch(error: &ActionError) {
    if let ActionError::FieldMismatch { target, step } = error {
        console_warn!("field mismatch: an action for `{target}` arrived at step `{step}`");
    }
}

/// The conversation a request names (owner and token checked), or a new one.
async fn open(
    kv: &Kv,
    owner: &Owner,
    id: Option<&str>,
    token: Option<String>,
) -> AppResult<Conversation> {
    match id {
        None => Conversation::start().await,
        Some(id) if ids::is_id(id) => Conversation::resume(kv, owner, id, token).await,
        Some(_) => Err(AppError::invalid_request(
            "invalid field `conversation_id`: not a conversation id",
        )),
    }
}

/// The body of `PUT /api/chat/update-field`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateField {
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    workflow: Option<String>,
    #[serde(default)]
    current_config: Config,
    field_name: String,
    value: FieldValue,
}

/// `PUT /api/chat/update-field`: validates and applies one field (spec Scenario 4).
pub async fn update_field(mut req: Request, env: Env, owner: &Owner) -> AppResult<Response> {
    let kv = Kv::new(&env)?;
    let token = req.headers().get(TOKEN_HEADER)?;
    let body: UpdateField = read_json(&mut req).await?;
    let workflow = body.workflow.as_deref().unwrap_or(DEFAULT_WORKFLOW);
    let spec = workflows::load(&kv, workflow).await?;
    let state = WorkflowState {
        current_step: spec.infer_step(&body.current_config, &[], false).to_owned(),
        config: body.current_config,
        skipped: Vec::new(),
    };
    let edit = UserAction::FieldEdit {
        target_field: body.field_name,
        value: body.value,
    };
    let (state, _) = spec.apply_action(&state, &edit)?;
    if body.conversation_id.is_some() {
        let conversation = open(&kv, owner, body.conversation_id.as_deref(), token).await?;
        if let Some(mut snapshot) = conversation.snapshot.clone() {
            if snapshot.workflow != spec.id {
                return Err(AppError::workflow_mismatch(
                    &conversation.id,
                    &snapshot.workflow,
                ));
            }
            snapshot.current_config = state.config.clone();
            if let Err(error) = conversation.save(&kv, &snapshot).await {
                worker::console_error!("update-field: the snapshot was not stored: {error}");
            }
        }
    }
    Ok(Response::from_json(
        &serde_json::json!({"updated_config": state.config}),
    )?)
}

/// `GET /api/conversations/:id`: the last snapshot, for refresh recovery; needs the token.
pub async fn get_conversation(
    req: &Request,
    env: &Env,
    owner: &Owner,
    id: &str,
) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::conversation_not_found());
    }
    let token = req.headers().get(TOKEN_HEADER)?;
    let snapshot = Conversation::snapshot(&Kv::new(env)?, owner, id, token).await?;
    let view = serde_json::json!({
        "conversation_id": id,
        "workflow": snapshot.workflow,
        "current_step": snapshot.current_step,
        "current_config": snapshot.current_config,
        "conversation_history": snapshot.conversation_history,
        "skipped": snapshot.skipped,
        "turns": snapshot.turns,
    });
    Ok(Response::from_json(&view)?)
}

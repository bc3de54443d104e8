//! Guided chat (guided-workflow.md) at the edge: `POST /api/chat` (a turn, SSE by default or one
//! JSON answer with `Accept: application/json`), `PUT /api/chat/update-field` (an inline edit,
//! no model call), `GET /api/conversations/:id` (the last state, for refresh recovery), and the
//! running turn's `GET …/stream` (join) and `POST …/stop`. Turns run on the conversation's
//! Durable Object (`hosted.rs`), which serializes them and keeps each streamed turn's log.

pub mod conversation;
pub mod hosted;
mod turn;

use serde::Deserialize;
use stepwise_core::conversation::ConversationKind;
use stepwise_core::llm::{ProviderConfig, ProviderKind};
use stepwise_core::protocol::ChatRequest;
use stepwise_core::spend::{Charge, estimate_tokens};
use stepwise_core::turn::{self as core_turn, TurnStart};
use stepwise_core::workflow::{ActionError, Config, FieldValue, UserAction, WorkflowState};
use worker::{Env, Request, Response, console_warn};

use self::conversation::{Conversation, TOKEN_HEADER};
pub use self::turn::Turn;
use crate::assistant::host::{self, DeliveryOrder, GuidedOrder, Ordered, TurnOrder};
use crate::conversations;
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::negotiate::{Delivery, Wire};
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;
use crate::platform::{spend, warm};
use crate::workflows::store as workflows;

/// The workflow used when a request names none.
const DEFAULT_WORKFLOW: &str = "research_stream";

/// `POST /api/chat`: an owner's turn. Refused before any model call when the kill switch is on
/// (503), a rate limit or a daily cap is reached (429), the message is too long (422), another
/// turn of the conversation runs or the request builds on a stale count of turns (409).
pub async fn post_turn(mut req: Request, env: Env, owner: &Owner) -> AppResult<Response> {
    let reply = Delivery::of(&req)?;
    let token = req.headers().get(TOKEN_HEADER)?;
    let request: ChatRequest = read_json(&mut req).await?;
    run_turn(request, token, reply, env, owner).await
}

/// Runs a guided turn of `owner` (with the conversation's `token` when it continues one) and
/// answers it as `reply` asks. The turn runs on its conversation's Durable Object
/// (`hosted.rs`), so a streamed one goes on when its client goes away; a first turn's id and
/// token are made here, and its response carries them at once (`x-stepwise-conversation`,
/// `x-conversation-token`), so a client can join it or stop it before it ends.
pub async fn run_turn(
    request: ChatRequest,
    token: Option<String>,
    reply: Delivery,
    env: Env,
    owner: &Owner,
) -> AppResult<Response> {
    let (id, token, start) = match continuing(&request)? {
        None => (
            warm::new_id(conversations::client::BINDING)?,
            ids::random_id()?,
            true,
        ),
        Some((id, _)) => (id.to_owned(), conversation::require_token(token)?, false),
    };
    let order = TurnOrder {
        owner: owner.clone(),
        conversation_id: id,
        start,
        what: Ordered::Guided(Box::new(GuidedOrder { request, token })),
        delivery: DeliveryOrder::of(reply),
    };
    host::send(&env, &order).await
}

/// A guided turn begun on its conversation, ready to run.
pub struct Prepared {
    /// The turn.
    pub turn: Turn,
    /// How it starts: a model call, or an answer at once.
    pub start: TurnStart,
    /// The dialect to stream in; `None` for one JSON answer.
    pub wire: Option<Wire>,
    /// What the turn was charged (given back if it cannot run).
    pub charge: Charge,
}

/// Begins the guided turn of `order` on conversation `id` (on its object): the provider, the
/// workflow, the plan, the turn's lease and its charge. Whichever of the lease and the charge is
/// refused undoes the other; a continuing turn is planned again on the state stored with its
/// conversation.
pub async fn prepare(
    order: GuidedOrder,
    id: &str,
    start_conversation: bool,
    reply: Delivery,
    env: Env,
    owner: &Owner,
) -> AppResult<Prepared> {
    let GuidedOrder { request, token } = order;
    let settings = Settings::from_env(&env)?;
    let kv = Kv::new(&env)?;
    let provider = provider_of(&settings, &request)?;
    let spec = workflows::load(&kv, workflow_of(&request)).await?;
    let turns = match start_conversation {
        true => None,
        false => Some(continuing(&request)?.map_or(0, |(_, turns)| turns)),
    };
    let lease_ms = u64::from(settings.deadline_ms) + LEASE_MARGIN_MS;
    // Planned on the state the request carries, to charge at once; a continuing turn is judged
    // again on its stored state below, so a stale or partial carried state does not refuse it
    // here.
    let start = match core_turn::begin_with(&spec, &request, settings.turn_options()) {
        Ok(start) => Some(start),
        Err(_) if turns.is_some() => None,
        Err(rejection) => {
            warn_on_mismatch(&rejection.error);
            return Err(AppError::from(rejection.error));
        }
    };
    let charge = match &start {
        Some(start) => charge_of(start, &provider, &settings),
        None => guessed_charge(&request, &provider),
    };
    let step = match &start {
        Some(TurnStart::CallModel(plan)) => Some(plan.step.clone()),
        _ => request.current_step.clone(),
    };
    let wire = reply.wire(step.as_deref())?;
    // The turn's lease and its charge are two objects' answers, neither waiting on the other;
    // whichever is refused undoes the other.
    let (begun, charged) = futures::future::join(
        Conversation::begin(&env, owner, id, &token, turns, lease_ms),
        spend::charge(&env, owner, charge),
    )
    .await;
    let conversation = match (begun, charged) {
        (Ok(conversation), Ok(())) => conversation,
        (Ok(conversation), Err(error)) => {
            conversation.abort(&env).await;
            return Err(error);
        }
        (Err(error), charged) => {
            if charged.is_ok() {
                refund(&env, owner, charge).await;
            }
            return Err(error);
        }
    };
    // A continuing turn builds on the state stored with its conversation, not the one it
    // carried (issue 31): planned again from there, its charge made right if that changed it.
    let (request, start) = match (conversation.stored.clone(), start) {
        (None, Some(start)) if conversation.is_new() => (request, start),
        (None, _) => {
            // A continuing turn of a conversation that holds no guided state: nothing to build on.
            conversation.abort(&env).await;
            refund(&env, owner, charge).await;
            return Err(AppError::conversation_not_found());
        }
        (Some(stored), _) => {
            let trusted = core_turn::with_stored_state(&request, &stored);
            let replanned = if stored.workflow != spec.id {
                Err(AppError::workflow_mismatch(
                    &conversation.id,
                    &stored.workflow,
                ))
            } else {
                core_turn::begin_with(&spec, &trusted, settings.turn_options()).map_err(|r| {
                    warn_on_mismatch(&r.error);
                    AppError::from(r.error)
                })
            };
            let settled = match replanned {
                Ok(start) => {
                    let needed = charge_of(&start, &provider, &settings);
                    recharge(&env, owner, charge, needed).await.map(|()| start)
                }
                Err(error) => Err(error),
            };
            match settled {
                Ok(start) => (trusted, start),
                Err(error) => {
                    conversation.abort(&env).await;
                    refund(&env, owner, charge).await;
                    return Err(error);
                }
            }
        }
    };
    let turn = Turn {
        spec,
        provider,
        request,
        conversation,
        settings,
        env,
    };
    let charge = charge_of(&start, &turn.provider, &turn.settings);
    Ok(Prepared {
        turn,
        start,
        wire,
        charge,
    })
}

/// The provider `request` names (the chat provider when it names none); 422
/// `unknown_provider` for one that is not configured.
fn provider_of(settings: &Settings, request: &ChatRequest) -> AppResult<ProviderConfig> {
    let named = request.provider.as_deref();
    let provider = settings.providers.for_chat(named).cloned();
    provider.ok_or_else(|| AppError::unknown_provider(named.unwrap_or("")))
}

/// The workflow `request` names, or the default one.
fn workflow_of(request: &ChatRequest) -> &str {
    request.workflow.as_deref().unwrap_or(DEFAULT_WORKFLOW)
}

/// Checks what a guided message is refused for whatever its conversation holds, in the order a
/// turn begun at once checks it: its provider (422 `unknown_provider`), its workflow (404
/// `unknown_workflow`) and its message's length (422 `message_too_long`). A message that would
/// wait behind a running turn is checked with this before it waits, so it is refused at once
/// rather than when its turn begins.
pub async fn checked_alone(env: &Env, request: &ChatRequest) -> AppResult<()> {
    let settings = Settings::from_env(env)?;
    provider_of(&settings, request)?;
    workflows::load(&Kv::new(env)?, workflow_of(request)).await?;
    core_turn::message_within(request, settings.turn_options())?;
    Ok(())
}

/// Gives a refused turn's charge back (a failure is only logged).
pub async fn refund(env: &Env, owner: &Owner, charge: Charge) {
    if let Err(refund) = spend::refund(env, owner, charge).await {
        console_warn!("a refused turn's charge was not refunded: {refund}");
    }
}

/// What a turn that starts as `start` is charged: one call when it calls a paid model.
fn charge_of(start: &TurnStart, provider: &ProviderConfig, settings: &Settings) -> Charge {
    match start {
        TurnStart::CallModel(plan) if provider.kind != ProviderKind::Offline => {
            let prompt = plan.system_prompt.len()
                + plan.messages.iter().map(|m| m.content.len()).sum::<usize>();
            Charge {
                calls: 1,
                tokens: estimate_tokens(prompt, settings.max_tokens),
            }
        }
        _ => Charge::default(),
    }
}

/// The charge of a continuing turn whose carried state could not be planned (it is planned on
/// its stored state once begun): a model call unless it is an inline edit.
fn guessed_charge(request: &ChatRequest, provider: &ProviderConfig) -> Charge {
    let edit = matches!(request.user_action, Some(UserAction::FieldEdit { .. }));
    if edit || provider.kind == ProviderKind::Offline {
        return Charge::default();
    }
    Charge {
        calls: 1,
        tokens: estimate_tokens(request.message.len(), 0),
    }
}

/// Makes a charge of `charged` into one of `needed` calls (the turn was planned again from its
/// stored state): the calls missing are charged (refused: an error, and the caller gives
/// `charged` back), the calls over are given back (a failed give-back is only logged, so the
/// caller never gives them back twice).
async fn recharge(env: &Env, owner: &Owner, charged: Charge, needed: Charge) -> AppResult<()> {
    let gap = |calls: u64| Charge { calls, tokens: 0 };
    if needed.calls > charged.calls {
        spend::charge(env, owner, gap(needed.calls - charged.calls)).await
    } else {
        if needed.calls < charged.calls {
            let over = gap(charged.calls - needed.calls);
            if let Err(error) = spend::refund(env, owner, over).await {
                console_warn!("a turn's extra charge was not given back: {error}");
            }
        }
        Ok(())
    }
}

/// Spec edge case 4: an action aimed at another step's field is logged as a warning, since it
/// means the client's idea of the step drifted from the server's.
fn warn_on_mismatch(error: &ActionError) {
    if let ActionError::FieldMismatch { target, step } = error {
        console_warn!("field mismatch: an action for `{target}` arrived at step `{step}`");
    }
}

/// How long a turn may hold its conversation beyond the model call's deadline, in ms.
const LEASE_MARGIN_MS: u64 = 30_000;

/// The conversation a request continues and the count of turns it builds on (`None`: a new
/// conversation); a continuing request names a well-formed id and states its `turns`.
fn continuing(request: &ChatRequest) -> AppResult<Option<(&str, u32)>> {
    match (&request.conversation_id, request.turns) {
        (None, _) => Ok(None),
        (Some(id), _) if !ids::is_id(id) => Err(AppError::invalid_request(
            "invalid field `conversation_id`: not a conversation id",
        )),
        (Some(id), Some(turns)) => Ok(Some((id, turns))),
        (Some(_), None) => Err(AppError::invalid_request(
            "missing field `turns`: a turn of a conversation states the `turns` of its last response",
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
    let edit = UserAction::FieldEdit {
        target_field: body.field_name,
        value: body.value,
    };
    let Some(id) = &body.conversation_id else {
        // No conversation: the edit is checked against the fields the client holds.
        let state = WorkflowState {
            current_step: spec.infer_step(&body.current_config, &[], false).to_owned(),
            config: body.current_config,
            skipped: Vec::new(),
        };
        let (state, _) = spec.apply_action(&state, &edit)?;
        return Ok(Response::from_json(
            &serde_json::json!({"updated_config": state.config}),
        )?);
    };
    if !ids::is_id(id) {
        return Err(AppError::conversation_not_found());
    }
    // A conversation's edit applies to the fields stored with it, not to those the client
    // carried; the stored workflow is checked first: an edit never lands on another's state.
    let record = conversation::read(&env, owner, id, token.clone()).await?;
    let stored = record.guided.unwrap_or_default();
    if stored.workflow != spec.id {
        return Err(AppError::workflow_mismatch(id, &stored.workflow));
    }
    let state = WorkflowState {
        current_step: stored.current_step,
        config: stored.current_config,
        skipped: stored.skipped,
    };
    let (state, _) = spec.apply_action(&state, &edit)?;
    conversation::set_config(&env, owner, id, token, state.config.clone()).await?;
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
    let record = conversation::read(env, owner, id, token).await?;
    if record.kind != ConversationKind::Guided {
        return Err(AppError::conversation_not_found());
    }
    let state = record.guided.unwrap_or_default();
    let view = serde_json::json!({
        "conversation_id": id,
        "workflow": state.workflow,
        "current_step": state.current_step,
        "current_config": state.current_config,
        "conversation_history": state.conversation_history,
        "skipped": state.skipped,
        "turns": record.turns,
    });
    Ok(Response::from_json(&view)?)
}

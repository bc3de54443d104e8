//! `POST /api/assistant/conversations/:id/approvals/:approval_id`: the owner's decision on a
//! tool call the assistant held for approval. `{"decision": "deny", "reason": …}` stores the
//! denial (the model reads the reason on the next turn) and answers `{approval}`;
//! `{"decision": "approve", "arguments"?: …, "context"?: …}` approves it, with the arguments
//! edited when given (checked against the tool's schema), and runs the call once in a turn of
//! its own, answered like any turn (SSE by default, JSON with `Accept: application/json`).
//! Everything is checked before anything changes: 404 `approval_not_found`, 409
//! `approval_settled` / `approval_expired`, 422 `invalid_arguments`.

use serde::Deserialize;
use serde_json::{Value, json};
use stepwise_core::agent::{AssistantResponse, ToolUse};
use stepwise_core::approval::{Approval, ApprovalError, complete_arguments};
use stepwise_core::conversation::{Command, Conversation, ConversationError, Reply};
use stepwise_core::protocol::StreamEvent;
use worker::{Env, Request, Response};

use super::session::decider;
use super::tools;
use super::turn::Ask;
use super::{Asked, start};
use crate::conversations::client;
use crate::platform::body::read_json;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::limits;
use crate::platform::negotiate::{Delivery, Wire};
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;
use crate::registry::registry;

/// Approve or deny.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Decision {
    Approve,
    Deny,
}

/// The request's body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    decision: Decision,
    /// Edited arguments (approve only).
    #[serde(default)]
    arguments: Option<Value>,
    /// Why (deny only).
    #[serde(default)]
    reason: Option<String>,
    /// The page context of the approving turn; the asking message's page when absent.
    #[serde(default)]
    context: Option<Value>,
}

/// An owner's decision, read from a request or an AG-UI run's resume entry.
pub struct Decided {
    /// Approve (else deny).
    pub approve: bool,
    /// Edited arguments (approve only).
    pub arguments: Option<Value>,
    /// Why (deny only).
    pub reason: Option<String>,
    /// The page context of the approving turn.
    pub context: Option<Value>,
}

/// Decides approval `approval_id` of the owner's conversation `id`.
pub async fn decide(
    mut req: Request,
    env: Env,
    owner: &Owner,
    id: &str,
    approval_id: &str,
) -> AppResult<Response> {
    let reply = Delivery::of(&req)?;
    let body: DecisionBody = read_json(&mut req).await?;
    let decided = match body.decision {
        Decision::Deny if body.arguments.is_some() || body.context.is_some() => {
            return Err(AppError::invalid_request(
                "a denial takes a `reason` only; `arguments` and `context` go with approve",
            ));
        }
        Decision::Approve if body.reason.is_some() => {
            return Err(AppError::invalid_request(
                "an approval takes no `reason`; it goes with deny",
            ));
        }
        decision => Decided {
            approve: decision == Decision::Approve,
            arguments: body.arguments,
            reason: body.reason,
            context: body.context,
        },
    };
    decide_as(env, owner, id, approval_id, decided, reply).await
}

/// Applies `decided` to approval `approval_id` of conversation `id`: a denial answers
/// `{approval}` (an AG-UI run: a run whose result carries it), an approval runs the call in a
/// turn answered as `reply` asks.
pub async fn decide_as(
    env: Env,
    owner: &Owner,
    id: &str,
    approval_id: &str,
    decided: Decided,
    reply: Delivery,
) -> AppResult<Response> {
    let record = read(&env, owner, id).await?;
    let (page, approval) = find(&record, approval_id)?;
    if !decided.approve {
        let command = Command::DenyApproval {
            approval_id: approval_id.to_owned(),
            reason: decided.reason.unwrap_or_default(),
            by: decider(owner),
        };
        let Reply::Conversation(record) = client::send(&env, id, &owner.id, &command).await? else {
            return Err(AppError::internal(&"a denial answered no record"));
        };
        let (_, approval) = find(&record, approval_id)?;
        return denied(approval, id, reply);
    }
    // Approving runs the call and a model turn: refused while model calls are off (a denial is
    // not, so the owner can still say no).
    if limits::calls_disabled(&env) {
        return Err(AppError::model_calls_disabled());
    }
    let tool = registry()
        .tool(&approval.tool)
        .ok_or_else(|| AppError::internal(&"an approval of a tool no longer offered"))?;
    // Edited arguments get the server's defaults written out, as proposed ones did.
    let providers = Settings::from_env(&env)?.providers;
    let edited = decided
        .arguments
        .as_ref()
        .map(|args| complete_arguments(&approval.tool, args, &providers.names(), &providers.chat));
    // Checked now, so a refusal changes nothing: the object checks the state again when the
    // turn begins.
    let mut trial = approval.clone();
    trial
        .approve(edited.as_ref(), "owner", now_ms())
        .map_err(refused)?;
    approval
        .check_edit(edited.as_ref(), &tool.input_schema)
        .map_err(refused)?;
    // Providers that are not configured would fail the run: refused now, the approval kept.
    if trial.tool == "start_research" {
        let args = trial.arguments_to_run();
        let named = args["providers"].as_array().into_iter().flatten();
        let unknown = named
            .chain(args.get("synthesis_provider"))
            .filter_map(Value::as_str)
            .find(|name| providers.get(name).is_none());
        if let Some(name) = unknown {
            let why = format!(
                "`{name:.64}` is not a configured provider; configured: {}",
                providers.names().join(", ")
            );
            return Err(refused(ApprovalError::InvalidArguments(why)));
        }
    }
    let edited = trial.edited_arguments.is_some();
    let what = match edited {
        true => tools::summary(&env, owner, &trial.tool, trial.arguments_to_run()).await,
        false => trial.summary.clone(),
    };
    let label = format!(
        "Approved{}: {what}",
        if edited { " with edits" } else { "" }
    );
    let context = decided
        .context
        .unwrap_or_else(|| json!({"current_page": page.unwrap_or("chat")}));
    let asked = Asked {
        title: label.clone(),
        ask: Ask::Approve {
            approval_id: approval_id.to_owned(),
            arguments: trial.edited_arguments,
            label,
        },
        context,
        provider: None,
        writing_style: None,
    };
    start(reply, env, owner, Some(id.to_owned()), asked).await
}

/// A denial's answer: `{approval}`, or for an AG-UI run, a run whose result says so.
fn denied(approval: &Approval, id: &str, reply: Delivery) -> AppResult<Response> {
    let Some(Wire::AgUi(mut encoder)) = (match reply {
        reply @ Delivery::AgUi { .. } => reply.wire(None)?,
        _ => None,
    }) else {
        return Ok(Response::from_json(&json!({"approval": approval}))?);
    };
    let reason = approval.reason.as_deref().unwrap_or("no reason given");
    // The interrupted call gets its result: denied.
    let answer = AssistantResponse {
        message: format!("Denied: {reason}"),
        conversation_id: Some(id.to_owned()),
        tool_history: vec![ToolUse {
            tool_name: approval.tool.clone(),
            input: approval.arguments.clone(),
            output: format!("denied by the user: {reason}"),
            is_error: true,
        }],
        approval: Some(approval.clone()),
        ..AssistantResponse::default()
    };
    let events = [
        StreamEvent::ToolStart {
            tool: approval.tool.clone(),
            input: approval.arguments.clone(),
            call_id: Some(approval.call_id.clone()),
        },
        StreamEvent::ToolComplete {
            tool: approval.tool.clone(),
            index: 0,
        },
        StreamEvent::Complete {
            payload: Box::new(answer.into()),
        },
    ];
    let frames: String = events.iter().map(|e| encoder.encode(e)).collect();
    let mut response = Response::ok(frames)?;
    response
        .headers_mut()
        .set("content-type", "text/event-stream")?;
    Ok(response)
}

/// The owner's assistant conversation `id`.
async fn read(env: &Env, owner: &Owner, id: &str) -> AppResult<Conversation> {
    match client::send(env, id, &owner.id, &Command::Read { token_hash: None }).await? {
        Reply::Conversation(record) => Ok(*record),
        _ => Err(AppError::internal(&"a read answered no record")),
    }
}

/// The approval `approval_id`, and the page its asking message was sent from.
fn find<'a>(
    record: &'a Conversation,
    approval_id: &str,
) -> AppResult<(Option<&'a str>, &'a Approval)> {
    let at = record
        .entries
        .iter()
        .position(|e| e.approval.as_ref().is_some_and(|a| a.id == approval_id))
        .ok_or_else(|| refused(ApprovalError::NotFound))?;
    let page = record.entries[..at]
        .iter()
        .rev()
        .find_map(|e| e.page.as_deref());
    let approval = record.entries[at]
        .approval
        .as_ref()
        .ok_or_else(|| refused(ApprovalError::NotFound))?;
    Ok((page, approval))
}

fn refused(error: ApprovalError) -> AppError {
    ConversationError::Approval(error).into()
}

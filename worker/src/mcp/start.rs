//! `research_start` over MCP, run by the session's object for the length of one `tools/call`:
//! the person is asked to approve the job through elicitation (the request goes out on the
//! call's SSE response; the client's answer comes back as a POST the object routes here), then
//! the job is drafted and started, and with `wait` the call streams a progress notification as
//! each provider finishes and returns when the job ends. Declining, or dismissing the question,
//! starts nothing. A client gone mid-call stops the waiting, never the job.

use std::rc::Rc;
use std::time::Duration;

use serde_json::{Value, json};
use stepwise_core::approval::describe_named;
use stepwise_core::mcp::elicitation::{Decision, approval_request, read_approval};
use stepwise_core::mcp::jsonrpc::{self, RequestId};
use stepwise_core::research::{DraftFields, fallback_title};
use worker::{Delay, Env, Response};

use super::calls;
use super::person::{Waiting, ask_person, streamed, tool_error};
use super::resume::{CallStream, GONE_AT_MOST_MS};
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::limits;
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;
use crate::research::{make_draft, start_job};

/// How long a waiting call follows its job before it returns what it has.
const WAIT_AT_MOST_MS: u64 = 900_000;
/// How often a waiting call reads its job.
const POLL_EVERY: Duration = Duration::from_millis(500);

/// What the client of a session can take.
pub struct Client {
    /// It declared elicitation (forms).
    pub elicitation: bool,
    /// It takes an event stream as an answer.
    pub streams: bool,
}

/// What a `research_start` call asked for.
pub struct StartCall {
    /// The call's request id (its answer's).
    pub id: RequestId,
    /// The progress token the client asked progress under.
    pub progress: Option<Value>,
    /// The question.
    pub prompt: String,
    /// The providers (every configured one when empty).
    pub providers: Vec<String>,
    /// The synthesis provider (the chat provider when absent).
    pub synthesis_provider: Option<String>,
    /// Whether to wait for the end.
    pub wait: bool,
}

/// Answers the `tools/call` request `id`: an SSE response whose events are the approval
/// question, progress, and at last the call's result. A client without elicitation gets a tool
/// error at once, as JSON.
pub fn run(
    env: Env,
    owner: Owner,
    waiting: Rc<Waiting>,
    client: Client,
    call: StartCall,
) -> AppResult<Response> {
    let id = call.id.clone();
    if !client.elicitation || !client.streams {
        let why = if client.elicitation {
            "research_start answers with an event stream (its question, progress and result): send `Accept: application/json, text/event-stream`."
        } else {
            super::NEEDS_SESSION
        };
        return Ok(Response::from_json(&jsonrpc::result(&id, tool_error(why)))?);
    }
    streamed(&Rc::clone(&waiting), id, move |sink| async move {
        flow(&env, &owner, &waiting, &sink, &call).await
    })
}

async fn flow(
    env: &Env,
    owner: &Owner,
    waiting: &Waiting,
    sink: &CallStream,
    call: &StartCall,
) -> AppResult<Value> {
    let settings = Settings::from_env(env)?;
    let configured = settings.providers.names();
    let providers = if call.providers.is_empty() {
        configured.clone()
    } else {
        call.providers.clone()
    };
    let synthesis = call
        .synthesis_provider
        .clone()
        .unwrap_or_else(|| settings.providers.chat.clone());
    if let Some(unknown) = providers
        .iter()
        .chain([&synthesis])
        .find(|name| settings.providers.get(name).is_none())
    {
        return Ok(tool_error(&format!(
            "`{unknown:.64}` is not a configured provider; configured: {}",
            configured.join(", ")
        )));
    }
    let arguments = json!({"prompt": call.prompt, "providers": providers});
    let params = approval_request(&describe_named("start_research", &arguments, None));
    let decision = read_approval(&ask_person(waiting, sink, &call.id, params).await?);
    if decision != Decision::Approved {
        let said = if decision == Decision::Declined {
            "declined"
        } else {
            "dismissed"
        };
        let text = format!("Not started: you {said} the research job. Nothing was created.");
        return Ok(json!({"content": [{"type": "text", "text": text}],
            "structuredContent": {"started": false, "decision": decision.name()}}));
    }
    // The kill switch again: it may have been turned on while the person decided.
    if limits::calls_disabled(env) {
        return Ok(tool_error(
            "Not started: model calls are switched off on this server for now.",
        ));
    }
    let fields = DraftFields {
        title: fallback_title(&call.prompt),
        prompt: call.prompt.clone(),
        selected_llms: providers.clone(),
        synthesis_llm: synthesis,
        external_reports: Vec::new(),
        stream_id: None,
    };
    let drafted = accepted(make_draft(env, &settings, owner, fields).await?).await?;
    let research_id = drafted["id"].as_str().unwrap_or_default().to_owned();
    let started = match accepted(start_job(env, owner, &research_id).await?).await {
        Ok(started) => started,
        // A refused start (a cap) leaves the draft: say so, with its id.
        Err(error) => {
            return Ok(tool_error(&format!(
                "The draft {research_id} was saved but not started: {}",
                error.message()
            )));
        }
    };
    if !call.wait {
        let text = format!(
            "Started research job {research_id} “{}” with {}. Follow it with research_status.",
            started["title"].as_str().unwrap_or(&call.prompt),
            providers.join(", ")
        );
        return Ok(json!({"content": [{"type": "text", "text": text}],
            "structuredContent": {"started": true, "decision": "approved", "research_id": research_id, "status": started["status"]}}));
    }
    match follow(
        env,
        owner,
        sink,
        &research_id,
        providers.len(),
        call.progress.clone(),
    )
    .await
    {
        Ok(result) => Ok(result),
        // The job runs on whatever went wrong here: name it, so that it can be followed.
        Err(error) => Ok(tool_error(&format!(
            "Research job {research_id} started, but following it failed ({}); research_status and research_result find it.",
            error.message()
        ))),
    }
}

/// Follows the started job to its end, a progress notification as each provider (and the
/// synthesis) finishes; the job's result, or where it stands when the wait ends.
async fn follow(
    env: &Env,
    owner: &Owner,
    sink: &CallStream,
    research_id: &str,
    providers: usize,
    progress: Option<Value>,
) -> AppResult<Value> {
    let total = providers + 1;
    let until = now_ms() + WAIT_AT_MOST_MS;
    let mut told = 0;
    loop {
        Delay::from(POLL_EVERY).await;
        let Some(job) = crate::research::read_owned(env, owner, research_id).await? else {
            return Ok(tool_error("the job is gone (deleted while it ran)"));
        };
        let status = job["status"].as_str().unwrap_or("").to_owned();
        let finished = job["llm_results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| matches!(r["status"].as_str(), Some("completed" | "failed")))
            .count();
        let done = matches!(
            status.as_str(),
            "completed" | "failed" | "awaiting_confirmation"
        );
        let count = finished + usize::from(status == "completed");
        if let Some(token) = &progress
            && count > told
        {
            told = count;
            let message = if status == "completed" {
                "the synthesis is written".to_owned()
            } else {
                format!("{finished} of {providers} providers answered")
            };
            sink.send(
                &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": count, "total": total, "message": message}}),
            );
        }
        // A client gone for good no longer follows the job (it runs on).
        if done || sink.gone_for_ms() > GONE_AT_MOST_MS || now_ms() > until {
            let mut result = calls::tool(
                env,
                owner,
                &stepwise_core::mcp::tools::ToolCall::ResearchResult {
                    research_id: research_id.to_owned(),
                },
            )
            .await?;
            result["structuredContent"]["started"] = true.into();
            result["structuredContent"]["decision"] = "approved".into();
            return Ok(result);
        }
    }
}

/// The job an object answered with 200, or its refusal as an error.
async fn accepted(mut answer: Response) -> AppResult<Value> {
    let status = answer.status_code();
    let text = answer.text().await?;
    if status == 200 {
        Ok(serde_json::from_str(&text)?)
    } else {
        Err(AppError::relayed(status, &text))
    }
}

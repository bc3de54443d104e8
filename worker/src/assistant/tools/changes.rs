//! The tools that change the owner's data, run only once the owner approved the call
//! (`crate::assistant::approvals`): `start_research` drafts a research job and starts it (its
//! provider calls counted against the owner's caps like any start), `update_stream_settings`
//! applies a name, instructions and field edits to a saved stream, validated by the core.

use serde_json::{Value, json};
use stepwise_core::agent::ToolOutcome;
use stepwise_core::approval::describe_named;
use stepwise_core::research::{DraftFields, fallback_title};
use stepwise_core::streams::StreamChange;
use worker::{Env, Response};

use super::{ToolContext, text};
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::platform::output::Output;
use crate::platform::owner::Owner;
use crate::research::{make_draft, start_job};
use crate::streams;
use crate::workflows::store as workflows;

/// `start_research`: a draft of `prompt` over `providers` (every configured one when absent),
/// started at once.
pub async fn start_research(
    ctx: &ToolContext<'_>,
    input: &Value,
    out: &mut Output,
) -> AppResult<ToolOutcome> {
    let prompt =
        text(input, "prompt").ok_or_else(|| AppError::invalid_request("`prompt` is required"))?;
    let settings = ctx.settings;
    let configured = settings.providers.names();
    let providers: Vec<String> = match input["providers"].as_array() {
        Some(named) if !named.is_empty() => named
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => configured.clone(),
    };
    let synthesis = text(input, "synthesis_provider")
        .map_or_else(|| settings.providers.chat.clone(), str::to_owned);
    for name in providers.iter().chain([&synthesis]) {
        if settings.providers.get(name).is_none() {
            return Err(AppError::invalid_request(format!(
                "`{name:.64}` is not a configured provider; configured: {}",
                configured.join(", ")
            )));
        }
    }
    out.tool_progress(
        "start_research",
        "drafting",
        "Drafting the research job...",
        0.2,
    )
    .await;
    let fields = DraftFields {
        title: fallback_title(prompt),
        prompt: prompt.to_owned(),
        selected_llms: providers.clone(),
        synthesis_llm: synthesis,
        external_reports: Vec::new(),
        stream_id: None,
    };
    let job = accepted(make_draft(ctx.env, settings, ctx.owner, fields).await?).await?;
    let id = job["id"].as_str().unwrap_or_default().to_owned();
    out.tool_progress("start_research", "starting", "Starting it...", 0.6)
        .await;
    let started = accepted(start_job(ctx.env, ctx.owner, &id).await?).await?;
    let title = started["title"].as_str().unwrap_or(prompt);
    Ok(ToolOutcome::Done {
        text: format!(
            "Started research job {id} {} with {} ({}). It runs in the background; its reports and synthesis appear on the Research page.",
            json!(title),
            match providers.len() {
                1 => "1 provider".to_owned(),
                n => format!("{n} providers"),
            },
            providers.join(", ")
        ),
        // Not a card: the approved run offers to open the job (`super::super::approved`).
        payload: Some(json!({"research_id": id})),
    })
}

/// `update_stream_settings`: the stream's name, chat instructions and field edits, all applied
/// or none.
pub async fn update_stream_settings(
    ctx: &ToolContext<'_>,
    input: &Value,
) -> AppResult<ToolOutcome> {
    let id = text(input, "stream_id")
        .ok_or_else(|| AppError::invalid_request("`stream_id` is required"))?;
    let mut fields = input.clone();
    if let Some(object) = fields.as_object_mut() {
        object.remove("stream_id");
    }
    let change: StreamChange = serde_json::from_value(fields)
        .map_err(|why| AppError::invalid_request(format!("the change is not valid: {why}")))?;
    let kv = Kv::new(ctx.env)?;
    let stream = streams::find(&kv, ctx.owner, id).await?;
    let spec = workflows::load(&kv, &stream.workflow).await?;
    let changed = stream.apply(&spec, &change, now_ms())?;
    let retention = streams::store::retention_seconds(ctx.env);
    streams::store::save(&kv, &changed, retention).await?;
    Ok(ToolOutcome::Done {
        text: format!(
            "Updated stream {} ({id}): {}.",
            json!(changed.name),
            stepwise_core::approval::stream_changes(input)
        ),
        payload: None,
    })
}

/// The JSON of an object's 200 answer, or its refusal's message as an error.
async fn accepted(mut response: Response) -> AppResult<Value> {
    let status = response.status_code();
    let body: Value = serde_json::from_str(&response.text().await?).unwrap_or_default();
    if status == 200 {
        return Ok(body);
    }
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or("the research job was refused");
    Err(AppError::invalid_request(message.to_owned()))
}

/// What a call of `tool` with `args` will do, in a sentence, naming what it acts on as the owner
/// knows it (a stream by its name, when it is theirs).
pub async fn summary(env: &Env, owner: &Owner, tool: &str, args: &Value) -> String {
    let stream = match (tool, args["stream_id"].as_str()) {
        ("update_stream_settings", Some(id)) => match Kv::new(env) {
            Ok(kv) => streams::find(&kv, owner, id).await.ok(),
            Err(_) => None,
        },
        _ => None,
    };
    describe_named(tool, args, stream.as_ref().map(|s| s.name.as_str()))
}

//! Server actions (chat-architecture.md §4): a suggested action with `handler: server` comes
//! back as `POST /api/assistant/actions`, runs here, and is answered as a normal assistant turn
//! (no model call of its own). `start_research` creates a research draft of its target question
//! over the configured models and offers to open it.

use serde_json::json;
use stepwise_core::agent::AssistantResponse;
use stepwise_core::markers::{ActionHandler, SuggestedAction};
use stepwise_core::research::{DraftFields, fallback_title};
use worker::Env;

use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;
use crate::research::make_draft;

/// What a server action runs with: the turn's bindings, settings and owner, and the stream in
/// view.
pub struct ActionContext<'a> {
    /// The Worker's bindings.
    pub env: &'a Env,
    /// Its settings.
    pub settings: &'a Settings,
    /// Whose turn it is.
    pub owner: &'a Owner,
    /// The id of the stream in view, if any.
    pub stream_id: Option<&'a str>,
}

/// Runs server action `action` on `target`.
pub async fn run(
    ctx: &ActionContext<'_>,
    action: &str,
    target: Option<&str>,
) -> AppResult<AssistantResponse> {
    match action {
        "start_research" => start_research(ctx, target).await,
        other => Err(AppError::invalid_request(format!(
            "there is no server action `{other:.64}`"
        ))),
    }
}

/// Refuses (422), before any turn begins, a server action whose target is missing.
pub fn check(action: &str, target: Option<&str>) -> AppResult<()> {
    match action {
        "start_research" => question(target).map(|_| ()),
        _ => Ok(()),
    }
}

fn question(target: Option<&str>) -> AppResult<&str> {
    target
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            AppError::invalid_request("`start_research` needs the question as its `target`")
        })
}

/// Creates a research draft of the question `target` and offers to open it.
async fn start_research(
    ctx: &ActionContext<'_>,
    target: Option<&str>,
) -> AppResult<AssistantResponse> {
    let prompt = question(target)?;
    let settings = ctx.settings;
    let fields = DraftFields {
        title: fallback_title(prompt),
        prompt: prompt.to_owned(),
        selected_llms: settings.providers.names(),
        synthesis_llm: settings.providers.chat.clone(),
        external_reports: Vec::new(),
        stream_id: ctx.stream_id.map(str::to_owned),
    };
    let mut answer = make_draft(ctx.env, settings, ctx.owner, fields).await?;
    let status = answer.status_code();
    let job: serde_json::Value = serde_json::from_str(&answer.text().await?).unwrap_or_default();
    if status != 200 {
        let message = job["error"]["message"]
            .as_str()
            .unwrap_or("the draft was refused");
        return Err(AppError::invalid_request(message.to_owned()));
    }
    let id = job["id"].as_str().unwrap_or_default().to_owned();
    let message = format!(
        "I created the research draft {} over {}. Open it to review it and start it when you are ready.",
        json!(job["title"].as_str().unwrap_or(prompt)),
        settings.providers.names().join(", ")
    );
    Ok(AssistantResponse {
        message,
        suggested_actions: vec![SuggestedAction {
            label: "Open the research".into(),
            action: "open_research".into(),
            handler: ActionHandler::Client,
            target: Some(id),
        }],
        ..AssistantResponse::default()
    })
}

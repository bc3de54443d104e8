//! Server actions (chat-architecture.md §4): a suggested action with `handler: server` comes
//! back as `POST /api/assistant/actions`, runs here, and is answered as a normal assistant turn
//! (no model call of its own). `start_research` creates a research draft of its target question
//! over the configured models and offers to open it.

use serde_json::json;
use stepwise_core::agent::AssistantResponse;
use stepwise_core::markers::{ActionHandler, SuggestedAction};
use stepwise_core::research::{DraftFields, fallback_title};

use super::turn::AssistantTurn;
use crate::platform::error::{AppError, AppResult};
use crate::research::make_draft;

/// Runs server action `action` on `target`.
pub async fn run(
    turn: &AssistantTurn,
    action: &str,
    target: Option<&str>,
) -> AppResult<AssistantResponse> {
    match action {
        "start_research" => start_research(turn, target).await,
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
    turn: &AssistantTurn,
    target: Option<&str>,
) -> AppResult<AssistantResponse> {
    let prompt = question(target)?;
    let settings = &turn.settings;
    let fields = DraftFields {
        title: fallback_title(prompt),
        prompt: prompt.to_owned(),
        selected_llms: settings.providers.names(),
        synthesis_llm: settings.providers.chat.clone(),
        external_reports: Vec::new(),
        stream_id: turn.loaded.stream.as_ref().map(|s| s.id.clone()),
    };
    let mut answer = make_draft(&turn.env, settings, &turn.owner, fields).await?;
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

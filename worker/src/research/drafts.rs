//! Research drafts: the body of `POST /api/research/draft` and `PUT /api/research/:id/draft`,
//! validated by the core, titled by the synthesis model (or the truncated prompt).

use serde::Deserialize;
use stepwise_core::llm::{ModelCall, ProviderKind};
use stepwise_core::protocol::{ChatMessage, Role};
use stepwise_core::research::{
    ExternalReport, ProviderOutcome, Research, TITLE_SYSTEM_PROMPT, clean_title, fallback_title,
};
use worker::Env;

use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::settings::Settings;
use crate::provider::{CallLimits, Gateway};

/// Longest wait for a generated title, in ms; the truncated prompt is used after that.
const TITLE_TIMEOUT_MS: u32 = 8000;
/// Most tokens of a title.
const TITLE_MAX_TOKENS: u32 = 32;

/// A draft's fields as a client sends them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DraftBody {
    prompt: String,
    #[serde(default)]
    selected_llms: Option<Vec<String>>,
    #[serde(default)]
    synthesis_llm: Option<String>,
    #[serde(default)]
    external_reports: Vec<ExternalReport>,
}

/// Validates a draft's fields (selected providers default to all configured, the synthesis
/// provider to the chat's) and titles it.
pub async fn build(env: &Env, body: DraftBody, id: String) -> AppResult<Research> {
    let settings = Settings::from_env(env)?;
    let selected = body
        .selected_llms
        .unwrap_or_else(|| settings.providers.names());
    let synthesis = body
        .synthesis_llm
        .unwrap_or_else(|| settings.providers.chat.clone());
    // Validate before spending a model call on the title.
    let mut research = Research::draft(
        id,
        String::new(),
        body.prompt,
        selected,
        synthesis,
        body.external_reports,
        now_ms(),
    )?;
    research.title = title(env, &settings, &research).await;
    Ok(research)
}

/// The title written by the synthesis model, or the truncated prompt when it is offline,
/// unknown, slow or fails.
async fn title(env: &Env, settings: &Settings, research: &Research) -> String {
    let usable = settings
        .providers
        .get(&research.synthesis_llm)
        .is_some_and(|p| p.kind != ProviderKind::Offline);
    if usable {
        let gateway = Gateway::new(env, settings);
        let limit = settings.timeout_ms.min(TITLE_TIMEOUT_MS);
        let limits = CallLimits {
            chunk_timeout_ms: limit,
            deadline_ms: limit,
        };
        let messages = [ChatMessage {
            role: Role::User,
            content: research.prompt.clone(),
        }];
        let call = ModelCall {
            system: TITLE_SYSTEM_PROMPT,
            messages: &messages,
            max_tokens: TITLE_MAX_TOKENS,
        };
        let answer = gateway
            .complete(&research.synthesis_llm, &call, &String::new, limits)
            .await;
        if let ProviderOutcome::Completed { text } = answer
            && let Some(title) = clean_title(&text)
        {
            return title;
        }
    }
    fallback_title(&research.prompt)
}

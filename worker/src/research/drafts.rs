//! Research drafts: the body of `POST /api/research/draft` and `PUT /api/research/:id/draft`,
//! validated by the core with the truncated prompt as title; once the job's object accepted
//! the draft, the synthesis model may write a better title (a model call the spending guard
//! counts; refused or failed, the truncated prompt stays).

use stepwise_core::llm::{ModelCall, ProviderKind};
use stepwise_core::offline::OfflineAnswer;
use stepwise_core::protocol::{ChatMessage, Role};
use stepwise_core::research::{
    DraftFields, DraftRequest, ProviderOutcome, TITLE_SYSTEM_PROMPT, clean_title, fallback_title,
};
use stepwise_core::spend::{Charge, estimate_tokens};
use worker::Env;

use crate::platform::error::AppResult;
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;
use crate::platform::spend;
use crate::provider::{CallLimits, Gateway};

/// Longest wait for a generated title, in ms; the truncated prompt is used after that.
const TITLE_TIMEOUT_MS: u32 = 8000;
/// Most tokens of a title.
const TITLE_MAX_TOKENS: u32 = 32;

/// The draft's fields: selected providers default to all configured, the synthesis provider to
/// the chat's, the title to the truncated prompt.
pub fn fields(body: DraftRequest, settings: &Settings) -> DraftFields {
    DraftFields {
        title: fallback_title(&body.prompt),
        selected_llms: body
            .selected_llms
            .unwrap_or_else(|| settings.providers.names()),
        synthesis_llm: body
            .synthesis_llm
            .unwrap_or_else(|| settings.providers.chat.clone()),
        prompt: body.prompt,
        external_reports: body.external_reports,
        stream_id: body.stream_id,
    }
}

/// Checks that the stream a draft names is the caller's (404 otherwise).
pub async fn check_stream(body: &DraftRequest, env: &Env, owner: &Owner) -> AppResult<()> {
    if let Some(id) = &body.stream_id {
        crate::streams::find(&Kv::new(env)?, owner, id).await?;
    }
    Ok(())
}

/// The title the synthesis model writes for `fields`, or `None` when it is offline, unknown,
/// over the owner's quota, slow or fails (the truncated prompt then stays).
pub async fn generated_title(
    env: &Env,
    settings: &Settings,
    owner: &Owner,
    fields: &DraftFields,
) -> Option<String> {
    let provider = settings.providers.get(&fields.synthesis_llm)?;
    if provider.kind == ProviderKind::Offline {
        return None;
    }
    let charge = Charge {
        calls: 1,
        tokens: estimate_tokens(
            fields.prompt.len() + TITLE_SYSTEM_PROMPT.len(),
            TITLE_MAX_TOKENS,
        ),
    };
    spend::charge(env, owner, charge).await.ok()?;
    let gateway = Gateway::new(env, settings);
    let limit = settings.timeout_ms.min(TITLE_TIMEOUT_MS);
    let limits = CallLimits {
        chunk_timeout_ms: limit,
        deadline_ms: limit,
        max_answer_bytes: 1024,
    };
    let messages = [ChatMessage::new(Role::User, fields.prompt.clone())];
    let call = ModelCall::text(TITLE_SYSTEM_PROMPT, &messages, TITLE_MAX_TOKENS);
    match gateway
        .complete(
            &fields.synthesis_llm,
            &call,
            &OfflineAnswer::default,
            limits,
        )
        .await
    {
        ProviderOutcome::Completed { text } => clean_title(&text),
        ProviderOutcome::Failed { .. } => None,
    }
}

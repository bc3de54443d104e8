//! Research endpoints (`/api/research...`, `/share/:id`). Each job lives in its own Durable
//! Object ([`crate::research_job`]); these handlers validate input and forward commands.

use serde::Deserialize;
use stepwise_core::llm::ProviderKind;
use stepwise_core::research::{
    ConfirmAction, ExternalReport, ProviderOutcome, Research, TITLE_SYSTEM_PROMPT, clean_title,
    fallback_title,
};
use worker::{Env, Headers, Request, Response, js_sys};

use crate::body::read_json;
use crate::config::Config;
use crate::error::{AppError, AppResult};
use crate::ids;
use crate::research_calls::complete;
use crate::research_effects::{INDEX_PREFIX, SHARE_PREFIX};
use crate::research_job::{self, Command};
use crate::resources::require_admin;
use crate::store::KV_BINDING;
use crate::url_parts;

/// Longest wait for a generated title, in ms; the truncated prompt is used after that.
const TITLE_TIMEOUT_MS: u32 = 8000;
/// Jobs listed by default and at most.
const LIST_DEFAULT: u64 = 20;
const LIST_MAX: u64 = 100;

/// The body of `POST /api/research/draft`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Draft {
    prompt: String,
    #[serde(default)]
    selected_llms: Option<Vec<String>>,
    #[serde(default)]
    synthesis_llm: Option<String>,
    #[serde(default)]
    external_reports: Vec<ExternalReport>,
}

/// `POST /api/research/draft`: a validated draft (selected providers default to all configured,
/// the synthesis provider to the chat's default), titled by the synthesis model.
pub async fn create_draft(mut req: Request, env: &Env) -> AppResult<Response> {
    let draft: Draft = read_json(&mut req).await?;
    let research = build_draft(env, draft, ids::random_id()?).await?;
    let id = research.id.clone();
    let command = Command::Create {
        research: Box::new(research),
    };
    let response = research_job::send(env, &id, &command).await?;
    let created = response.status_code() == 200;
    Ok(if created {
        response.with_status(201)
    } else {
        response
    })
}

/// `PUT /api/research/:id/draft`: replaces a draft's fields (409 once it has started).
pub async fn update_draft(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("research"));
    }
    let draft: Draft = read_json(&mut req).await?;
    let research = build_draft(env, draft, id.to_owned()).await?;
    let command = Command::UpdateDraft {
        research: Box::new(research),
    };
    research_job::send(env, id, &command).await
}

/// Validates a draft's fields and titles it.
async fn build_draft(env: &Env, draft: Draft, id: String) -> AppResult<Research> {
    let config = Config::from_env(env)?;
    let selected = draft
        .selected_llms
        .unwrap_or_else(|| config.providers.names());
    let synthesis = draft
        .synthesis_llm
        .unwrap_or_else(|| config.providers.chat.clone());
    let now = js_sys::Date::now() as u64;
    // Validate before spending a model call on the title.
    let mut research = Research::draft(
        id,
        String::new(),
        draft.prompt,
        selected,
        synthesis,
        draft.external_reports,
        now,
    )
    .map_err(|e| AppError::new(422, e.code(), e.to_string()))?;
    research.title = title(env, &config, &research).await;
    Ok(research)
}

/// The title written by the synthesis model, or the truncated prompt when it is offline,
/// unknown, slow or fails.
async fn title(env: &Env, config: &Config, research: &Research) -> String {
    let usable = config
        .providers
        .get(&research.synthesis_llm)
        .is_some_and(|p| p.kind != ProviderKind::Offline);
    if usable {
        let timeout = config.timeout_ms.min(TITLE_TIMEOUT_MS);
        let answer = complete(
            env,
            config,
            &research.synthesis_llm,
            TITLE_SYSTEM_PROMPT,
            &research.prompt,
            32,
            timeout,
        )
        .await;
        if let ProviderOutcome::Completed { text } = answer
            && let Some(title) = clean_title(&text)
        {
            return title;
        }
    }
    fallback_title(&research.prompt)
}

/// The body of `POST /api/research`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Start {
    research_id: String,
}

/// `POST /api/research`: starts a draft (422 `no_providers_selected` or
/// `provider_not_configured`; 409 unless it is a draft).
pub async fn start(mut req: Request, env: &Env) -> AppResult<Response> {
    let config = Config::from_env(env)?;
    let start: Start = read_json(&mut req).await?;
    let url = req.inner().url();
    let command = Command::Start {
        configured: config.providers.names(),
        origin: url_parts::origin(&url).to_owned(),
    };
    research_job::send(env, &start.research_id, &command).await
}

/// `GET /api/research/:id`.
pub async fn get(env: &Env, id: &str) -> AppResult<Response> {
    research_job::send(env, id, &Command::Get).await
}

/// `GET /api/research/:id/events`: SSE, a `snapshot` then every change as it happens.
pub async fn events(env: &Env, id: &str) -> AppResult<Response> {
    research_job::send(env, id, &Command::Events).await
}

/// The body of `POST /api/research/:id/confirm`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Confirm {
    action: ConfirmAction,
}

/// `POST /api/research/:id/confirm` with `{action: proceed | retry | cancel}`.
pub async fn confirm(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    let Confirm { action } = read_json(&mut req).await?;
    research_job::send(env, id, &Command::Confirm { action }).await
}

/// `POST /api/research/:id/retry` (409 `conflict` unless the job failed).
pub async fn retry(env: &Env, id: &str) -> AppResult<Response> {
    research_job::send(env, id, &Command::Retry).await
}

/// `GET /api/research?limit=N&cursor=C`: jobs newest first from the KV index (`{items, cursor}`).
/// KV is eventually consistent: a new job or status may take a moment to show here.
pub async fn list(req: &Request, env: &Env) -> AppResult<Response> {
    let url = req.inner().url();
    let limit = match url_parts::query_param(&url, "limit") {
        None => LIST_DEFAULT,
        Some(limit) => limit
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=LIST_MAX).contains(n))
            .ok_or_else(|| AppError::new(422, "invalid_request", "limit must be 1 to 100"))?,
    };
    let cursor = url_parts::query_param(&url, "cursor").filter(|c| !c.is_empty());
    let mut listing = env
        .kv(KV_BINDING)?
        .list()
        .prefix(INDEX_PREFIX.to_owned())
        .limit(limit);
    if let Some(cursor) = cursor {
        listing = listing.cursor(cursor);
    }
    let page = listing.execute().await.map_err(AppError::internal)?;
    let items: Vec<serde_json::Value> = page.keys.into_iter().filter_map(|k| k.metadata).collect();
    let next = if page.list_complete {
        None
    } else {
        page.cursor
    };
    Ok(Response::from_json(
        &serde_json::json!({"items": items, "cursor": next}),
    )?)
}

/// `PUT /api/research/:id` (admin): imports a whole job record, replacing the job's record (a
/// restore from a backup or a migration). The record's `id` must be the path's id.
pub async fn import(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    require_admin(&req, env, "research imports")?;
    let research: Research = read_json(&mut req).await?;
    if research.id != id {
        return Err(AppError::new(
            422,
            "invalid_request",
            "the record's id differs from the path's id",
        ));
    }
    let command = Command::Import {
        research: Box::new(research),
    };
    research_job::send(env, id, &command).await
}

/// `GET /share/:id`: the published read-only report page.
pub async fn share(env: &Env, id: &str) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("report"));
    }
    let page = env
        .kv(KV_BINDING)?
        .get(&format!("{SHARE_PREFIX}{id}"))
        .text()
        .await
        .map_err(AppError::internal)?
        .ok_or_else(|| AppError::not_found("report"))?;
    let headers = Headers::new();
    headers.set("content-type", "text/html; charset=utf-8")?;
    headers.set("cache-control", "public, max-age=300")?;
    headers.set(
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'",
    )?;
    headers.set("x-content-type-options", "nosniff")?;
    Ok(Response::ok(page)?.with_headers(headers))
}

//! Research jobs (research-lifecycle.md) at the edge: the HTTP handlers (`/api/research...`,
//! `/share/:id`), the job's Durable Object ([`job_object::ResearchJob`]), and the consumers of
//! the `llm-call` and `research-events` queues. The lifecycle's rules are the core's
//! (`stepwise_core::research`); everything here validates input, forwards commands, and
//! performs effects.

pub mod calls;
mod client;
mod drafts;
mod effects;
mod index;
pub mod job_object;
mod listeners;
pub mod messages;
pub mod notify;
pub mod share;

use serde::Deserialize;
use stepwise_core::research::{Command, ConfirmAction, Research};
use worker::{Env, Request, Response};

use self::client::JobRequest;
use self::drafts::DraftBody;
use crate::platform::admin::require_admin;
use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::settings::Settings;
use crate::platform::url_parts;

/// Jobs listed by default and at most.
const LIST_DEFAULT: u64 = 20;
const LIST_MAX: u64 = 100;

/// Applies a command to the job `id` and answers with the job (or the core's refusal).
async fn apply(env: &Env, id: &str, command: Command) -> AppResult<Response> {
    let request = JobRequest::Apply {
        command: &command,
        origin: None,
    };
    client::send(env, id, request).await
}

/// `POST /api/research/draft`: a validated, titled draft; 201 with the job.
pub async fn create_draft(mut req: Request, env: &Env) -> AppResult<Response> {
    let body: DraftBody = read_json(&mut req).await?;
    let research = drafts::build(env, body, ids::random_id()?).await?;
    let id = research.id.clone();
    let create = Command::Create {
        research: Box::new(research),
    };
    let response = apply(env, &id, create).await?;
    Ok(if response.status_code() == 200 {
        response.with_status(201)
    } else {
        response
    })
}

/// `PUT /api/research/:id/draft`: replaces a draft's fields (409 once it has started).
pub async fn edit_draft(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("research"));
    }
    let body: DraftBody = read_json(&mut req).await?;
    let draft = drafts::build(env, body, id.to_owned()).await?;
    let edit = Command::EditDraft {
        draft: Box::new(draft),
    };
    apply(env, id, edit).await
}

/// The body of `POST /api/research`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    research_id: String,
}

/// `POST /api/research`: starts a draft (422 `no_providers_selected` or
/// `provider_not_configured`; 409 unless it is a draft).
pub async fn start(mut req: Request, env: &Env) -> AppResult<Response> {
    let settings = Settings::from_env(env)?;
    let body: StartBody = read_json(&mut req).await?;
    let url = req.inner().url();
    let command = Command::Start {
        configured: settings.providers.names(),
    };
    let request = JobRequest::Apply {
        command: &command,
        origin: Some(url_parts::origin(&url)),
    };
    client::send(env, &body.research_id, request).await
}

/// `GET /api/research/:id`: the job, with `synthesis_not_available`.
pub async fn get(env: &Env, id: &str) -> AppResult<Response> {
    client::send(env, id, JobRequest::Get).await
}

/// `GET /api/research/:id/events`: SSE, a `snapshot` then every change as it happens.
pub async fn events(env: &Env, id: &str) -> AppResult<Response> {
    client::send(env, id, JobRequest::Events).await
}

/// The body of `POST /api/research/:id/confirm`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmBody {
    action: ConfirmAction,
}

/// `POST /api/research/:id/confirm` with `{action: proceed | retry | cancel}`.
pub async fn confirm(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    let ConfirmBody { action } = read_json(&mut req).await?;
    apply(env, id, Command::Confirm { action }).await
}

/// `POST /api/research/:id/retry` (409 `conflict` unless the job failed).
pub async fn retry(env: &Env, id: &str) -> AppResult<Response> {
    apply(env, id, Command::Retry).await
}

/// `GET /api/research?limit=N&cursor=C`: jobs newest first from the KV index (`{items, cursor}`).
pub async fn list(req: &Request, env: &Env) -> AppResult<Response> {
    let url = req.inner().url();
    let limit = match url_parts::query_param(&url, "limit") {
        None => LIST_DEFAULT,
        Some(limit) => limit
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=LIST_MAX).contains(n))
            .ok_or_else(|| AppError::invalid_request("limit must be 1 to 100"))?,
    };
    let cursor = url_parts::query_param(&url, "cursor").filter(|c| !c.is_empty());
    let page = index::list(&Kv::new(env)?, limit, cursor).await?;
    let page = serde_json::json!({"items": page.items, "cursor": page.cursor});
    Ok(Response::from_json(&page)?)
}

/// `PUT /api/research/:id` (admin): imports a whole job record, replacing the job's record (a
/// restore from a backup or a migration). The record's `id` must be the path's id.
pub async fn import(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    require_admin(&req, env, "research imports")?;
    let research: Research = read_json(&mut req).await?;
    if research.id != id {
        return Err(AppError::invalid_request(
            "the record's id differs from the path's id",
        ));
    }
    let import = Command::Import {
        research: Box::new(research),
    };
    apply(env, id, import).await
}

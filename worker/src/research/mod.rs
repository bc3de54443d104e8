//! Research jobs (research-lifecycle.md) at the edge: the HTTP handlers (`/api/research...`,
//! `/share/:id`), the job's Durable Object ([`job_object::ResearchJob`]), and the consumers of
//! the `llm-call` and `research-events` queues. Every route needs an owner and acts only on the
//! owner's jobs (anyone else gets 404); routes that can call a model pass the kill switch, the
//! rate limits and the spending guard first. The lifecycle's rules are the core's
//! (`stepwise_core::research`); everything here validates input, forwards commands, and
//! performs effects.

pub mod calls;
pub mod client;
mod drafts;
mod effects;
pub mod index;
pub mod job_object;
mod listeners;
pub mod messages;
pub mod notify;
pub mod share;

use stepwise_core::llm::ProviderKind;
use stepwise_core::research::{
    Caller, Command, ConfirmRequest, DraftFields, DraftRequest, Research, StartRequest,
};
use stepwise_core::spend::{Charge, estimate_tokens};
use worker::{Env, Request, Response};

use self::client::JobRequest;
use crate::platform::body::{read_json, require_json};
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;
use crate::platform::settings::{Settings, share_ttl_ms, var};
use crate::platform::{ids, spend, url_parts};

/// Applies the owner's command to the job `id`; answers with the job (or the core's refusal).
async fn apply(env: &Env, id: &str, owner: &Owner, command: &Command) -> AppResult<Response> {
    let caller = Caller::Owner(owner.id.clone());
    client::send(env, id, &caller, JobRequest::Apply(command)).await
}

/// The owner's job `id` (404 for anyone else's).
pub async fn read_job(env: &Env, id: &str, owner: &Owner) -> AppResult<Research> {
    let caller = Caller::Owner(owner.id.clone());
    let mut response = client::send(env, id, &caller, JobRequest::Get).await?;
    if response.status_code() != 200 {
        return Err(AppError::not_found("research"));
    }
    Ok(response.json().await?)
}

/// Applies a command that makes model calls: they are counted against the owner's daily caps
/// first (429 `quota_exceeded` before any call), and given back if the job refuses the command.
async fn apply_paid(env: &Env, id: &str, owner: &Owner, command: &Command) -> AppResult<Response> {
    let settings = Settings::from_env(env)?;
    let job = read_job(env, id, owner).await?;
    let paid_calls: Vec<String> = job
        .calls_for(command)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let calls = paid_calls
        .iter()
        .filter(|name| {
            settings
                .providers
                .get(name)
                .is_some_and(|p| p.kind != ProviderKind::Offline)
        })
        .count() as u64;
    let per_call = estimate_tokens(
        job.prompt.len(),
        settings.max_tokens.max(calls::RESEARCH_MAX_TOKENS),
    );
    let charge = Charge {
        calls,
        tokens: calls * per_call,
    };
    spend::charge(env, owner, charge).await?;
    // The job's object accepts the command only if it makes exactly the calls charged for: a
    // draft edited between the read above and now is refused (409 `job_changed`), not run
    // with calls nobody paid for.
    let paid = Command::Paid {
        command: Box::new(command.clone()),
        calls: paid_calls,
    };
    let response = apply(env, id, owner, &paid).await;
    if !matches!(&response, Ok(answer) if answer.status_code() == 200) {
        spend::refund(env, owner, charge).await?;
    }
    response
}

/// Once the object accepted a draft, lets the synthesis model title it and answers with the
/// titled job (or the job as it was, when no title came).
async fn titled(
    env: &Env,
    settings: &Settings,
    owner: &Owner,
    id: &str,
    fields: &DraftFields,
    accepted: Response,
) -> AppResult<Response> {
    match drafts::generated_title(env, settings, owner, fields).await {
        Some(title) => apply(env, id, owner, &Command::SetTitle { title }).await,
        None => Ok(accepted),
    }
}

/// `POST /api/research/draft`: a validated draft of the caller, then titled; 201 with the job.
pub async fn create_draft(mut req: Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let settings = Settings::from_env(env)?;
    let body: DraftRequest = read_json(&mut req).await?;
    drafts::check_stream(&body, env, owner).await?;
    let drafted = make_draft(env, &settings, owner, drafts::fields(body, &settings)).await?;
    Ok(match drafted.status_code() {
        200 => drafted.with_status(201),
        _ => drafted,
    })
}

/// A validated draft of `owner` from `fields`, stored, then titled: the job as its object
/// answers (200), or the object's refusal.
pub async fn make_draft(
    env: &Env,
    settings: &Settings,
    owner: &Owner,
    fields: DraftFields,
) -> AppResult<Response> {
    let id = ids::random_id()?;
    let research = Research::draft(id.clone(), owner.id.clone(), fields.clone(), now_ms())?;
    let create = Command::Create {
        research: Box::new(research),
    };
    let accepted = apply(env, &id, owner, &create).await?;
    if accepted.status_code() != 200 {
        return Ok(accepted);
    }
    titled(env, settings, owner, &id, &fields, accepted).await
}

/// `PUT /api/research/:id/draft`: replaces a draft's fields (409 once it has started), then
/// titles it again.
pub async fn edit_draft(
    mut req: Request,
    env: &Env,
    owner: &Owner,
    id: &str,
) -> AppResult<Response> {
    let settings = Settings::from_env(env)?;
    let body: DraftRequest = read_json(&mut req).await?;
    drafts::check_stream(&body, env, owner).await?;
    let fields = drafts::fields(body, &settings);
    let edit = Command::EditDraft {
        fields: fields.clone(),
    };
    let accepted = apply(env, id, owner, &edit).await?;
    if accepted.status_code() != 200 {
        return Ok(accepted);
    }
    titled(env, &settings, owner, id, &fields, accepted).await
}

/// `POST /api/research`: starts a draft (422 `no_providers_selected` or
/// `provider_not_configured`; 409 unless it is a draft, and 409 `job_changed` when it was
/// edited while being started), its calls counted up front.
pub async fn start(mut req: Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let body: StartRequest = read_json(&mut req).await?;
    start_job(env, owner, &body.research_id).await
}

/// Starts the owner's draft `id`, its calls counted up front: the job as its object answers,
/// or the object's refusal.
pub async fn start_job(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let settings = Settings::from_env(env)?;
    let start = Command::Start {
        configured: settings.providers.names(),
    };
    apply_paid(env, id, owner, &start).await
}

/// `GET /api/research/:id`: the job, with `synthesis_not_available`.
pub async fn get(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let caller = Caller::Owner(owner.id.clone());
    client::send(env, id, &caller, JobRequest::Get).await
}

/// The owner's job `id` as its object reads it (the answer of `GET /api/research/:id`); `None`
/// when it is not theirs or does not exist (the MCP tools and the owner's export).
pub async fn read_owned(
    env: &Env,
    owner: &Owner,
    id: &str,
) -> AppResult<Option<serde_json::Value>> {
    let caller = Caller::Owner(owner.id.clone());
    let mut answer = client::send(env, id, &caller, JobRequest::Get).await?;
    let status = answer.status_code();
    let text = answer.text().await?;
    match status {
        200 => Ok(Some(serde_json::from_str(&text)?)),
        404 => Ok(None),
        _ => Err(AppError::relayed(status, &text)),
    }
}

/// `GET /api/research/:id/events`: SSE, a `snapshot` then every change as it happens.
pub async fn events(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let caller = Caller::Owner(owner.id.clone());
    client::send(env, id, &caller, JobRequest::Events).await
}

/// `POST /api/research/:id/confirm` with `{action: proceed | retry | cancel}`.
pub async fn confirm(mut req: Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let ConfirmRequest { action } = read_json(&mut req).await?;
    apply_paid(env, id, owner, &Command::Confirm { action }).await
}

/// `POST /api/research/:id/retry` (409 `conflict` unless the job failed).
pub async fn retry(req: &Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    require_json(req)?;
    apply_paid(env, id, owner, &Command::Retry).await
}

/// `POST /api/research/:id/share`: publishes the completed job's read-only report (the
/// webhook fires then), for `SHARE_TTL_DAYS`; sharing again extends it.
pub async fn share(req: &Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    require_json(req)?;
    let url = req.inner().url();
    let base_url = var(env, "PUBLIC_URL").unwrap_or_else(|| url_parts::origin(&url).to_owned());
    let share = Command::Share {
        share_id: ids::random_id()?,
        base_url,
        ttl_ms: share_ttl_ms(env),
    };
    apply(env, id, owner, &share).await
}

/// `DELETE /api/research/:id/share`: withdraws the report; its page is gone at once.
pub async fn unshare(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    apply(env, id, owner, &Command::Unshare).await
}

/// `DELETE /api/research/:id`: deletes the job, its index entry and its share page (204).
pub async fn delete(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    apply(env, id, owner, &Command::Delete).await
}

/// `GET /api/research?limit=N&cursor=C`: the caller's jobs, newest first, from the owner's KV
/// index (`{items, cursor}`).
pub async fn list(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    index::LIST.respond(req, env, &owner.id).await
}

/// `PUT /api/research/:id` (admin): imports a whole job record, replacing the job's record (a
/// restore from a backup or a migration). The record's `id` must be the path's id; the core
/// validates the rest (an owner, the fields' limits, a share URL that is `http:` or `https:`).
pub async fn import(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    let research: Research = read_json(&mut req).await?;
    if research.id != id {
        return Err(AppError::invalid_request(
            "the record's id differs from the path's id",
        ));
    }
    let import = Command::Import {
        research: Box::new(research),
    };
    client::send(env, id, &Caller::Admin, JobRequest::Apply(&import)).await
}

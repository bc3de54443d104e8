//! The help-desk session's Durable Object (class `HelpDesk`, one per session): it owns the
//! transcript and the clarification context, so a reload, a second tab or a restart mid-loop
//! resumes at the same question, and it serializes turns (one lease at a time). No rule of its
//! own: load → `core::help::handle` → save or erase. Its alarm announces an escalation to
//! operators (listing and event, retried every 30 s until both succeed, then marked with the
//! core's `Announced`) and erases the session past its retention (`CONVERSATION_RETENTION_DAYS`).
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use stepwise_core::help::session::Handled;
use stepwise_core::help::{Caller, HelpCommand, HelpSession, SessionStatus, handle};
use worker::{
    DurableObject, Env, Request, Response, Result, State, Storage, console_warn, durable_object,
};

use super::client::{Envelope, ID_HEADER};
use super::{escalations, index};
use crate::conversations::client::retention_ms;
use crate::platform::deadline::{Alarm, now_ms};
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;

/// Storage key of the record.
const RECORD: &str = "session";
/// Wait before announcing an escalation again after a failure.
const ANNOUNCE_RETRY_MS: u64 = 30_000;

/// The Durable Object class `HelpDesk` (wrangler.toml), one instance per session id.
#[durable_object]
pub struct HelpDesk {
    state: State,
    env: Env,
    /// The alarm this instance set, until it fires.
    armed: Alarm,
}

impl DurableObject for HelpDesk {
    fn new(state: State, env: Env) -> Self {
        HelpDesk {
            state,
            env,
            armed: Alarm::default(),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        match self.answer(req).await {
            Ok(response) => Ok(response),
            Err(error) => error.to_response(),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        // The alarm that fired is gone.
        self.armed.forget();
        let storage = self.state.storage();
        let Some(mut record) = load(&storage).await? else {
            return Response::ok("");
        };
        let now = now_ms();
        let expires = record.updated_at.saturating_add(retention_ms(&self.env));
        if now >= expires {
            storage.delete_all().await?;
            if let Ok(kv) = Kv::new(&self.env) {
                let _ = escalations::unlist(&kv, &record).await;
                let _ = index::unlist(&kv, &record).await;
            }
            return Response::ok("");
        }
        if unannounced(&record) {
            if let Err(error) = escalations::announce(&self.env, &record.view()).await {
                console_warn!(
                    "help: escalation of {} not announced yet: {error:?}",
                    record.id
                );
                let retry = now.saturating_add(ANNOUNCE_RETRY_MS);
                self.armed.at(&storage, retry).await?;
                return Response::ok("");
            }
            // Read again: other commands may have changed the session while it was announced.
            let Some(fresh) = load(&storage).await? else {
                return Response::ok("");
            };
            record = fresh;
            let announced = handle(
                Some(&record),
                &record.id,
                &Caller::Operator,
                &HelpCommand::Announced,
                now,
            );
            if let Ok(Handled {
                record: Some(next), ..
            }) = announced
            {
                storage.put(RECORD, serde_json::to_string(&next)?).await?;
                record = next;
            }
        }
        let expires = record.updated_at.saturating_add(retention_ms(&self.env));
        self.armed.at(&storage, expires).await?;
        Response::ok("")
    }
}

impl HelpDesk {
    /// `POST /` an [`Envelope`] (a caller and a command) for the session in `x-stepwise-session`.
    async fn answer(&self, mut req: Request) -> AppResult<Response> {
        let id = req
            .headers()
            .get(ID_HEADER)?
            .filter(|v| !v.is_empty())
            .ok_or_else(|| AppError::not_found("help session"))?;
        let envelope: Envelope = serde_json::from_str(&req.text().await?)?;
        let storage = self.state.storage();
        let record = load(&storage).await?;
        let handled: Handled = handle(
            record.as_ref(),
            &id,
            &envelope.caller,
            &envelope.command,
            now_ms(),
        )?;
        if handled.erase {
            storage.delete_all().await?;
            self.armed.forget();
            if let Some(gone) = &record
                && let Ok(kv) = Kv::new(&self.env)
            {
                let _ = escalations::unlist(&kv, gone).await;
                let _ = index::unlist(&kv, gone).await;
            }
        } else if let Some(next) = &handled.record {
            storage.put(RECORD, serde_json::to_string(next)?).await?;
            let retention_seconds = retention_ms(&self.env) / 1000;
            let listed = match Kv::new(&self.env) {
                Ok(kv) => index::relist(&kv, record.as_ref(), next, retention_seconds).await,
                Err(error) => Err(error),
            };
            if let Err(error) = listed {
                console_warn!("help: session {} not listed: {error:?}", next.id);
            }
            // An escalation is announced by the alarm, at once; otherwise the alarm is retention.
            let at = if unannounced(next) {
                now_ms()
            } else {
                next.updated_at.saturating_add(retention_ms(&self.env))
            };
            self.armed.at(&storage, at).await?;
        }
        Ok(Response::from_json(&handled.reply)?)
    }
}

/// Whether the session was escalated and operators were not told yet.
fn unannounced(record: &HelpSession) -> bool {
    record.escalation.as_ref().is_some_and(|e| !e.announced)
        && record.status == SessionStatus::Escalated
}

async fn load(storage: &Storage) -> Result<Option<HelpSession>> {
    match storage.get::<String>(RECORD).await? {
        Some(json) => Ok(Some(serde_json::from_str(&json)?)),
        None => Ok(None),
    }
}

//! The research job's Durable Object: one per job, owning its record so concurrent provider
//! results never lose an update (the object handles one request at a time). It has no rule of
//! its own: it loads the record, hands each command to `core::research::handle`, saves, arms
//! the alarm, and performs the effects ([`super::effects`]).
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use stepwise_core::research::{self, Command, Effect, Research};
use worker::{
    DurableObject, Env, Method, Request, Response, Result, State, Storage, durable_object,
};

use super::client::ORIGIN_HEADER;
use super::effects;
use super::listeners::Listeners;
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::settings::{number, var};

/// Default time a call may stay open before the alarm fails it, in ms (`RESEARCH_TIMEOUT_MS`).
const DEFAULT_TIMEOUT_MS: u64 = 5 * 60 * 1000;
/// Storage keys: the record, and the public origin for share links.
const RECORD: &str = "research";
const ORIGIN: &str = "origin";

/// The Durable Object class `ResearchJob` (wrangler.toml), one instance per research id.
#[durable_object]
pub struct ResearchJob {
    state: State,
    env: Env,
    listeners: Listeners,
}

impl DurableObject for ResearchJob {
    fn new(state: State, env: Env) -> Self {
        ResearchJob {
            state,
            env,
            listeners: Listeners::default(),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        match self.answer(req).await {
            Ok(response) => Ok(response),
            Err(error) => error.to_response(),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        let storage = self.state.storage();
        let mut record = load(&storage).await?;
        let timeout_ms = self.timeout();
        let rang = self.apply(&storage, &mut record, Command::Timeout { timeout_ms }, None);
        if let Err(error) = rang.await {
            return Err(worker::Error::RustError(error.to_string()));
        }
        // Re-arm even when nothing was overdue: an early alarm must not end the watch.
        if let Some(job) = &record {
            self.arm(&storage, job).await?;
        }
        Response::ok("")
    }
}

impl ResearchJob {
    /// `GET /` the job, `GET /events` a stream, `POST /` a command (see [`super::client`]).
    ///
    /// The request is read whole before the record is loaded: reading a body is not a storage
    /// operation, so the object admits other requests meanwhile, and a record loaded before it
    /// could be stale by the time the command is applied (two deliveries of one call would then
    /// both be granted their claim).
    async fn answer(&self, mut req: Request) -> AppResult<Response> {
        let storage = self.state.storage();
        if req.method() == Method::Get {
            let record = load(&storage).await?;
            let job = existing(&record)?;
            return match req.path().as_str() {
                "/events" => self.listeners.open(job),
                _ => Ok(Response::from_json(&job.view())?),
            };
        }
        let origin = req.headers().get(ORIGIN_HEADER)?;
        let command: Command = req.json().await?;
        let mut record = load(&storage).await?;
        let claim = matches!(command, Command::Claim { .. });
        let effects = self.apply(&storage, &mut record, command, origin).await?;
        if !claim {
            return Ok(Response::from_json(&existing(&record)?.view())?);
        }
        // A claim is answered with the prompt (this delivery makes the call) or 204 (it does not).
        let prompt = effects.into_iter().find_map(|effect| match effect {
            Effect::MakeCall { prompt, .. } => Some(prompt),
            _ => None,
        });
        Ok(match prompt {
            Some(prompt) => Response::ok(prompt)?,
            None => Response::empty()?.with_status(204),
        })
    }

    /// Applies one command and commits its result. Every change to the record and the alarm
    /// happens before the first outbound call (KV, queues): a Durable Object only holds other
    /// requests back during storage operations, so a request that saved after an outbound await
    /// could overwrite a change made meanwhile.
    async fn apply(
        &self,
        storage: &Storage,
        record: &mut Option<Research>,
        command: Command,
        origin: Option<String>,
    ) -> AppResult<Vec<Effect>> {
        let now = now_ms();
        let mut effects = research::handle(record, command, now)?;
        if effects.is_empty() {
            return Ok(effects);
        }
        if let Some(origin) = origin {
            storage.put(ORIGIN, origin).await?;
        }
        if effects.contains(&Effect::Publish) {
            let base_url = match var(&self.env, "PUBLIC_URL") {
                Some(url) => url,
                None => storage.get::<String>(ORIGIN).await?.unwrap_or_default(),
            };
            let share_id = ids::random_id()?;
            let publish = Command::Publish { share_id, base_url };
            effects.extend(research::handle(record, publish, now)?);
        }
        let job = existing(record)?;
        save(storage, job).await?;
        self.arm(storage, job).await?;
        effects::perform(&self.env, &self.listeners, job, &effects).await;
        Ok(effects)
    }

    fn timeout(&self) -> u64 {
        number(&self.env, "RESEARCH_TIMEOUT_MS").unwrap_or(DEFAULT_TIMEOUT_MS)
    }

    /// Keeps the alarm on the earliest deadline of an open call, or removes it.
    async fn arm(&self, storage: &Storage, research: &Research) -> Result<()> {
        match research.next_deadline(self.timeout()) {
            Some(at) => {
                let delay = at.saturating_sub(now_ms()) as i64;
                storage.set_alarm(delay.max(1)).await
            }
            None => storage.delete_alarm().await,
        }
    }
}

/// The job, or 404 when the object holds none.
fn existing(record: &Option<Research>) -> AppResult<&Research> {
    record
        .as_ref()
        .ok_or_else(|| AppError::not_found("research"))
}

/// The job's record, stored as JSON text: one serde backend for it in the whole Worker.
async fn load(storage: &Storage) -> Result<Option<Research>> {
    match storage.get::<String>(RECORD).await? {
        Some(json) => Ok(Some(serde_json::from_str(&json)?)),
        None => Ok(None),
    }
}

async fn save(storage: &Storage, research: &Research) -> Result<()> {
    storage.put(RECORD, serde_json::to_string(research)?).await
}

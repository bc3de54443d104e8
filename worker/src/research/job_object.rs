//! The research job's Durable Object: one per job, owning its record so concurrent provider
//! results never lose an update (the object handles one request at a time). It has no rule of
//! its own: it loads the record, hands each command and its caller to `core::research::handle`
//! (reads to `core::research::read`), saves when the record changed, arms the alarm, and
//! performs the effects ([`super::effects`]).
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use stepwise_core::research::{self, Caller, Command, Effect, Research};
use worker::{
    DurableObject, Env, Method, Request, Response, Result, State, Storage, durable_object,
};

use super::client::{CALLER_HEADER, parse_caller};
use super::effects;
use super::listeners::{Listeners, StreamTimes};
use crate::platform::deadline::{Alarm, now_ms};
use crate::platform::error::{AppError, AppResult};
use crate::platform::settings::{lifetimes, number};

/// Storage keys: the record; an index write KV refused, to retry.
const RECORD: &str = "research";
const INDEX_PENDING: &str = "index_pending";
/// Delay before retrying an index write KV refused, in ms.
const INDEX_RETRY_MS: u64 = 30_000;

/// The Durable Object class `ResearchJob` (wrangler.toml), one instance per research id.
#[durable_object]
pub struct ResearchJob {
    state: State,
    env: Env,
    listeners: Listeners,
    /// The alarm this instance set (ms since the epoch), until it fires; `None` when unknown.
    armed: Alarm,
}

impl DurableObject for ResearchJob {
    fn new(state: State, env: Env) -> Self {
        ResearchJob {
            state,
            env,
            listeners: Listeners::default(),
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
        match self.ring().await {
            Ok(()) => Response::ok(""),
            Err(error) => Err(worker::Error::RustError(error.to_string())),
        }
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
        let caller = req
            .headers()
            .get(CALLER_HEADER)?
            .and_then(|header| parse_caller(&header))
            .ok_or_else(|| AppError::not_found("research"))?;
        let storage = self.state.storage();
        if req.method() == Method::Get {
            let record = load(&storage).await?;
            let job = research::read(&record, &caller)?;
            return match req.path().as_str() {
                "/events" => self.listeners.open(job, self.stream_times()),
                _ => Ok(Response::from_json(&job.view())?),
            };
        }
        // serde_json, from the text: `Request::json` would link a second deserializer.
        let command: Command = serde_json::from_str(&req.text().await?)?;
        let mut record = load(&storage).await?;
        let claim = matches!(command, Command::Claim { .. });
        let effects = self.apply(&storage, &mut record, &caller, command).await?;
        if claim {
            // Answered with the prompt (this delivery makes the call) or 204 (it does not).
            let prompt = effects.into_iter().find_map(|effect| match effect {
                Effect::MakeCall { prompt, .. } => Some(prompt),
                _ => None,
            });
            return Ok(match prompt {
                Some(prompt) => Response::ok(prompt)?,
                None => Response::empty()?.with_status(204),
            });
        }
        match &record {
            Some(job) => Ok(Response::from_json(&job.view())?),
            None => Ok(Response::empty()?.with_status(204)),
        }
    }

    /// Applies one command and commits its result. Every change to the record and the alarm
    /// happens before the first outbound call (KV, queues): a Durable Object only holds other
    /// requests back during storage operations, so a request that saved after an outbound await
    /// could overwrite a change made meanwhile.
    async fn apply(
        &self,
        storage: &Storage,
        record: &mut Option<Research>,
        caller: &Caller,
        command: Command,
    ) -> AppResult<Vec<Effect>> {
        let handled = research::handle(record, caller, command, now_ms())?;
        if !handled.changed && handled.effects.is_empty() {
            return Ok(handled.effects);
        }
        let lifetimes = lifetimes(&self.env);
        match record.as_ref() {
            Some(job) if handled.changed => {
                save(storage, job).await?;
                self.arm(storage, job).await?;
            }
            Some(_) => {}
            None => {
                // Erased: nothing of the job stays in the object.
                self.armed.clear(storage).await?;
                storage.delete_all().await?;
            }
        }
        let follow_up = effects::perform(
            &self.env,
            &self.listeners,
            record.as_ref(),
            &handled.effects,
            &lifetimes,
        )
        .await;
        if follow_up.index_pending && record.is_some() {
            storage.put(INDEX_PENDING, true).await?;
            let retry_at = now_ms().saturating_add(INDEX_RETRY_MS);
            let next = record
                .as_ref()
                .and_then(|job| job.next_deadline(&lifetimes))
                .map_or(retry_at, |at| at.min(retry_at));
            self.armed.at(storage, next).await?;
        }
        Ok(handled.effects)
    }

    /// The alarm: overdue calls fail, an expired share is dropped, an expired draft or a
    /// finished job past its retention is erased, and a refused index write is retried.
    async fn ring(&self) -> AppResult<()> {
        let storage = self.state.storage();
        let mut record = load(&storage).await?;
        if record.is_none() {
            return Ok(());
        }
        let lifetimes = lifetimes(&self.env);
        let timeout = Command::Timeout { lifetimes };
        self.apply(&storage, &mut record, &Caller::System, timeout)
            .await?;
        let Some(job) = &record else {
            return Ok(());
        };
        if storage.get::<bool>(INDEX_PENDING).await?.unwrap_or(false) {
            storage.delete(INDEX_PENDING).await?;
            let index = [Effect::Index];
            let follow_up =
                effects::perform(&self.env, &self.listeners, Some(job), &index, &lifetimes).await;
            if follow_up.index_pending {
                storage.put(INDEX_PENDING, true).await?;
                let retry = now_ms().saturating_add(INDEX_RETRY_MS);
                self.armed.at(&storage, retry).await?;
                return Ok(());
            }
        }
        // Re-arm even when nothing was due: an early alarm must not end the watch.
        self.arm(&storage, job).await?;
        Ok(())
    }

    fn stream_times(&self) -> StreamTimes {
        StreamTimes {
            heartbeat_ms: number(&self.env, "STREAM_HEARTBEAT_MS").unwrap_or(15_000),
            draft_stream_ms: number(&self.env, "DRAFT_STREAM_MS").unwrap_or(10 * 60 * 1000),
        }
    }

    /// Keeps the alarm on the job's next deadline (an open call, a share's or draft's expiry,
    /// the end of its retention), or removes it. An alarm already set for that time or earlier
    /// stays: one that fires before anything is due sets itself again (`ring`).
    async fn arm(&self, storage: &Storage, research: &Research) -> Result<()> {
        match research.next_deadline(&lifetimes(&self.env)) {
            Some(at) => self.armed.at(storage, at).await,
            None => self.armed.clear(storage).await,
        }
    }
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

//! The research job's Durable Object: one per job, owning its record so concurrent provider
//! results never lose an update (the object handles one command at a time). It applies
//! `core::research` transitions and performs their effects ([`crate::research_effects`]).
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use serde::{Deserialize, Serialize};
use stepwise_core::research::{
    ConfirmAction, Effect, ProviderOutcome, Research, ResearchStatus, synthesis_prompt,
};
use worker::{
    DurableObject, Env, Method, Request, RequestInit, Response, Result, State, Storage,
    durable_object, js_sys,
};

use crate::config::number;
use crate::error::{AppError, AppResult};
use crate::ids;
use crate::research_calls::{CallTask, Claim};
use crate::research_effects::Effects;
use crate::research_listeners::Listeners;

/// The Durable Object binding's name in wrangler.toml.
pub const BINDING: &str = "RESEARCH";
/// Default time a call may stay open before the alarm fails it, in ms (`RESEARCH_TIMEOUT_MS`).
const DEFAULT_TIMEOUT_MS: u64 = 5 * 60 * 1000;
/// Storage keys: the record, the public origin for share links, the last claimed synthesis attempt.
const RECORD: &str = "research";
const ORIGIN: &str = "origin";
const SYNTHESIS_CLAIMED: &str = "synthesis_claimed";

/// An operation on a job, sent by the Worker's handlers and by the queue consumer. Externally
/// tagged (`{"start": {...}}`): an internally tagged enum would buffer every command, records
/// included, through serde's generic `Content` tree, which costs tens of KB of bundle.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Store a new draft.
    Create { research: Box<Research> },
    /// Replace the record (admin import), whatever the job's state.
    Import { research: Box<Research> },
    /// Replace a draft's fields (409 unless the job is still a draft).
    UpdateDraft { research: Box<Research> },
    /// Read the job.
    Get,
    /// Open an events stream.
    Events,
    /// Start the draft; `configured` are the provider names, `origin` the public base URL.
    Start {
        configured: Vec<String>,
        origin: String,
    },
    /// Answer a partial failure.
    Confirm { action: ConfirmAction },
    /// Retry from `failed`.
    Retry,
    /// A queue consumer asks to make a call (answered with a [`Claim`]).
    Claim {
        task: CallTask,
        provider: String,
        attempt: u32,
    },
    /// A provider call ended.
    CallFinished {
        provider: String,
        attempt: u32,
        outcome: ProviderOutcome,
    },
    /// The synthesis call ended.
    SynthesisFinished {
        attempt: u32,
        outcome: ProviderOutcome,
    },
}

/// Sends a command to a job's object and returns its answer (errors come back as responses).
pub async fn send(env: &Env, id: &str, command: &Command) -> AppResult<Response> {
    if !ids::is_id(id) {
        return Err(AppError::not_found("research"));
    }
    let stub = env.durable_object(BINDING)?.id_from_name(id)?.get_stub()?;
    let body = serde_json::to_string(command).map_err(AppError::internal)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(body.into()));
    let request = Request::new_with_init("https://research.job/", &init)?;
    Ok(stub.fetch_with_request(request).await?)
}

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

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let command: Command = req.json().await?;
        let storage = self.state.storage();
        if let Command::Import { research } = &command {
            save(&storage, research).await?;
            storage.delete(SYNTHESIS_CLAIMED).await?;
            self.arm(&storage, research).await?;
            self.effects().index(research).await;
            return Response::from_json(&**research);
        }
        let Some(mut research) = load(&storage).await? else {
            return match command {
                Command::Create { research } => {
                    save(&storage, &research).await?;
                    self.effects().index(&research).await;
                    Response::from_json(&*research)
                }
                _ => AppError::not_found("research").to_response(),
            };
        };
        let now = js_sys::Date::now() as u64;
        let effects = match command {
            Command::Create { .. } => {
                return AppError::new(409, "conflict", "the research job exists").to_response();
            }
            Command::Import { .. } => unreachable!("handled before loading"),
            Command::UpdateDraft { research: edited } => {
                if research.status != ResearchStatus::Draft {
                    let message = "only a draft can be edited";
                    return AppError::new(409, "conflict", message).to_response();
                }
                let edited = Research {
                    id: research.id,
                    created_at: research.created_at,
                    ..*edited
                };
                save(&storage, &edited).await?;
                self.effects().index(&edited).await;
                return Response::from_json(&edited);
            }
            Command::Get => return Response::from_json(&research),
            Command::Events => return self.listeners.open(&research),
            Command::Claim {
                task,
                provider,
                attempt,
            } => {
                return self
                    .claim(&storage, &mut research, task, &provider, attempt, now)
                    .await;
            }
            Command::Start { configured, origin } => {
                let started = research.start(&configured, now);
                if started.is_ok() {
                    storage.put(ORIGIN, origin).await?;
                }
                started
            }
            Command::Confirm { action } => research.confirm(action, now),
            Command::Retry => research.retry(now),
            Command::CallFinished {
                provider,
                attempt,
                outcome,
            } => Ok(research.call_finished(&provider, attempt, outcome, now)),
            Command::SynthesisFinished { attempt, outcome } => {
                Ok(research.synthesis_finished(attempt, outcome, now))
            }
        };
        match effects {
            Ok(effects) => {
                self.commit(&storage, &mut research, effects).await?;
                Response::from_json(&research)
            }
            Err(error) => {
                let status = if error.code() == "conflict" { 409 } else { 422 };
                AppError::new(status, error.code(), error.to_string()).to_response()
            }
        }
    }

    async fn alarm(&self) -> Result<Response> {
        let storage = self.state.storage();
        if let Some(mut research) = load(&storage).await? {
            let now = js_sys::Date::now() as u64;
            let effects = research.fail_overdue(now, self.timeout());
            self.commit(&storage, &mut research, effects).await?;
            // Re-arm even when nothing was overdue (an early alarm must not end the watch).
            self.arm(&storage, &research).await?;
        }
        Response::ok("")
    }
}

impl ResearchJob {
    fn timeout(&self) -> u64 {
        number(&self.env, "RESEARCH_TIMEOUT_MS").unwrap_or(DEFAULT_TIMEOUT_MS)
    }

    fn effects(&self) -> Effects<'_> {
        Effects {
            env: &self.env,
            listeners: &self.listeners,
        }
    }

    /// Saves a transition's result and performs its effects. Every change to the record and
    /// the alarm happens before the first outbound call (KV, queues): a Durable Object only
    /// holds other requests back during storage operations, so a request that saved after an
    /// outbound await could overwrite a change made meanwhile.
    async fn commit(
        &self,
        storage: &Storage,
        research: &mut Research,
        effects: Vec<Effect>,
    ) -> Result<()> {
        if effects.is_empty() {
            return Ok(());
        }
        let origin = storage.get::<String>(ORIGIN).await?.unwrap_or_default();
        let after_save = self.effects().prepare(research, effects, &origin);
        save(storage, research).await?;
        self.arm(storage, research).await?;
        self.effects().dispatch(research, after_save).await;
        Ok(())
    }

    /// Keeps the alarm on the earliest deadline of an open call, or removes it.
    async fn arm(&self, storage: &Storage, research: &Research) -> Result<()> {
        match research.next_deadline(self.timeout()) {
            Some(at) => {
                let delay = at.saturating_sub(js_sys::Date::now() as u64) as i64;
                storage.set_alarm(delay.max(1)).await
            }
            None => storage.delete_alarm().await,
        }
    }

    /// Lets the first delivery of a call through; duplicates and stale calls get `open: false`.
    async fn claim(
        &self,
        storage: &Storage,
        research: &mut Research,
        task: CallTask,
        provider: &str,
        attempt: u32,
        now: u64,
    ) -> Result<Response> {
        let open = match task {
            CallTask::Provider => {
                let effects = research.call_started(provider, attempt, now);
                let open = !effects.is_empty();
                self.commit(storage, research, effects).await?;
                open
            }
            CallTask::Synthesis => {
                let claimed = storage.get::<u32>(SYNTHESIS_CLAIMED).await?.unwrap_or(0);
                let open = research.status == ResearchStatus::Synthesizing
                    && research.synthesis_attempt == attempt
                    && claimed < attempt;
                if open {
                    storage.put(SYNTHESIS_CLAIMED, attempt).await?;
                }
                open
            }
        };
        let prompt = match (open, task) {
            (false, _) => String::new(),
            (true, CallTask::Provider) => research.prompt.clone(),
            (true, CallTask::Synthesis) => synthesis_prompt(research),
        };
        Response::from_json(&Claim { open, prompt })
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

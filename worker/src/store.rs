//! Storage in Workers KV: workflow spec overrides and conversation snapshots.
//!
//! Turns are stateless at the edge (the browser carries the state); a snapshot is written after
//! each turn for refresh recovery, keyed by conversation id, and never read back within a turn.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use stepwise_core::protocol::ChatMessage;
use stepwise_core::workflow::{Config as FieldConfig, MAX_NAME_LEN, WorkflowSpec};
use worker::{Env, kv::KvStore};

use crate::error::{AppError, AppResult};

/// The KV binding's name in wrangler.toml.
pub const KV_BINDING: &str = "STEPWISE_KV";
/// How long a conversation snapshot is kept after its last turn.
const CONVERSATION_TTL_SECONDS: u64 = 30 * 24 * 3600;

/// The last persisted state of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Access token; only its holder may read or extend the conversation.
    pub token: String,
    /// The workflow id.
    pub workflow: String,
    /// The step the next request uses.
    pub current_step: String,
    /// The collected fields.
    pub current_config: FieldConfig,
    /// The conversation so far.
    pub conversation_history: Vec<ChatMessage>,
    /// Skipped optional fields.
    pub skipped: Vec<String>,
    /// Turns persisted so far.
    pub turns: u32,
}

/// The KV-backed storage service.
pub struct Store {
    kv: KvStore,
}

impl Store {
    /// The store of this environment.
    pub fn new(env: &Env) -> AppResult<Store> {
        Ok(Store {
            kv: env.kv(KV_BINDING)?,
        })
    }

    /// A workflow spec: the KV override, else the built-in one; 404 `unknown_workflow` otherwise.
    /// Kept per isolate for [`SPEC_CACHE_MS`]: every turn needs it, and KV reads are the slowest
    /// step of a turn's setup (KV itself only promises eventual consistency, up to a minute).
    pub async fn workflow(&self, id: &str) -> AppResult<WorkflowSpec> {
        let valid_id = !id.is_empty()
            && id.len() <= MAX_NAME_LEN
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid_id {
            return Err(AppError::new(404, "unknown_workflow", "no such workflow"));
        }
        let now = worker::js_sys::Date::now();
        let cached = SPECS.with(|specs| {
            specs
                .borrow()
                .get(id)
                .filter(|(_, at)| now - at < SPEC_CACHE_MS)
                .map(|(spec, _)| spec.clone())
        });
        if let Some(spec) = cached {
            return Ok(spec);
        }
        let stored = self
            .kv
            .get(&workflow_key(id))
            .text()
            .await
            .map_err(AppError::internal)?;
        let spec = match stored {
            Some(json) => WorkflowSpec::from_json(&json).map_err(AppError::internal)?,
            None => WorkflowSpec::builtin(id).ok_or_else(|| {
                AppError::new(404, "unknown_workflow", format!("no workflow `{id}`"))
            })?,
        };
        remember(&spec, now);
        Ok(spec)
    }

    /// Stores a validated spec override (and serves it at once from this isolate).
    pub async fn put_workflow(&self, spec: &WorkflowSpec) -> AppResult<()> {
        let json = serde_json::to_string(spec).map_err(AppError::internal)?;
        let put = self
            .kv
            .put(&workflow_key(&spec.id), json)
            .map_err(AppError::internal)?;
        put.execute().await.map_err(AppError::internal)?;
        remember(spec, worker::js_sys::Date::now());
        Ok(())
    }

    /// A conversation's snapshot.
    pub async fn conversation(&self, id: &str) -> AppResult<Option<Snapshot>> {
        self.kv
            .get(&conversation_key(id))
            .json::<Snapshot>()
            .await
            .map_err(AppError::internal)
    }

    /// Writes a conversation's snapshot; the error is returned for the caller to report.
    pub async fn put_conversation(&self, id: &str, snapshot: &Snapshot) -> Result<(), String> {
        let json = serde_json::to_string(snapshot).map_err(|e| e.to_string())?;
        let put = self
            .kv
            .put(&conversation_key(id), json)
            .map_err(|e| e.to_string())?;
        put.expiration_ttl(CONVERSATION_TTL_SECONDS)
            .execute()
            .await
            .map_err(|e| e.to_string())
    }
}

/// How long an isolate serves a workflow spec without reading KV again.
const SPEC_CACHE_MS: f64 = 30_000.0;

thread_local! {
    /// Workflow specs by id, with the time they were read (an isolate runs one thread).
    static SPECS: RefCell<HashMap<String, (WorkflowSpec, f64)>> = RefCell::new(HashMap::new());
}

fn remember(spec: &WorkflowSpec, at: f64) {
    SPECS.with(|specs| {
        specs
            .borrow_mut()
            .insert(spec.id.clone(), (spec.clone(), at))
    });
}

fn workflow_key(id: &str) -> String {
    format!("workflow:{id}")
}

fn conversation_key(id: &str) -> String {
    format!("conversation:{id}")
}

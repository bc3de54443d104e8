//! Storage in Workers KV: workflow spec overrides and conversation snapshots.
//!
//! Turns are stateless at the edge (the browser carries the state); a snapshot is written after
//! each turn for refresh recovery, keyed by conversation id, and never read back within a turn.

use serde::{Deserialize, Serialize};
use stepwise_core::protocol::ChatMessage;
use stepwise_core::workflow::{Config as FieldConfig, WorkflowSpec};
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
    pub async fn workflow(&self, id: &str) -> AppResult<WorkflowSpec> {
        let stored = self
            .kv
            .get(&workflow_key(id))
            .text()
            .await
            .map_err(AppError::internal)?;
        if let Some(json) = stored {
            return WorkflowSpec::from_json(&json).map_err(AppError::internal);
        }
        WorkflowSpec::builtin(id)
            .ok_or_else(|| AppError::new(404, "unknown_workflow", format!("no workflow `{id}`")))
    }

    /// Stores a validated spec override.
    pub async fn put_workflow(&self, spec: &WorkflowSpec) -> AppResult<()> {
        let json = serde_json::to_string(spec).map_err(AppError::internal)?;
        let put = self
            .kv
            .put(&workflow_key(&spec.id), json)
            .map_err(AppError::internal)?;
        put.execute().await.map_err(AppError::internal)
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

fn workflow_key(id: &str) -> String {
    format!("workflow:{id}")
}

fn conversation_key(id: &str) -> String {
    format!("conversation:{id}")
}

//! Workflow specs: a validated override in KV, else the built-in spec, kept per isolate for a
//! while since every chat turn needs one.

use std::cell::RefCell;
use std::collections::HashMap;

use stepwise_core::workflow::{MAX_NAME_LEN, WorkflowSpec};

use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;

/// How long an isolate serves a workflow spec without reading KV again, in ms.
const SPEC_CACHE_MS: u64 = 30_000;

thread_local! {
    /// Workflow specs by id, with the time they were read (an isolate runs one thread).
    static SPECS: RefCell<HashMap<String, (WorkflowSpec, u64)>> = RefCell::new(HashMap::new());
}

/// A workflow spec: the KV override, else the built-in one; 404 `unknown_workflow` otherwise.
/// Kept per isolate for 30 s: KV reads are the slowest step of a turn's setup, and KV itself
/// only promises eventual consistency (up to a minute).
pub async fn load(kv: &Kv, id: &str) -> AppResult<WorkflowSpec> {
    let valid_id = !id.is_empty()
        && id.len() <= MAX_NAME_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid_id {
        return Err(AppError::unknown_workflow(id));
    }
    let now = now_ms();
    let cached = SPECS.with(|specs| {
        specs
            .borrow()
            .get(id)
            .filter(|(_, at)| now.saturating_sub(*at) < SPEC_CACHE_MS)
            .map(|(spec, _)| spec.clone())
    });
    if let Some(spec) = cached {
        return Ok(spec);
    }
    let spec = match kv.text(&key(id)).await? {
        Some(json) => WorkflowSpec::from_json(&json).map_err(|e| AppError::internal(&e))?,
        None => WorkflowSpec::builtin(id).ok_or_else(|| AppError::unknown_workflow(id))?,
    };
    remember(&spec, now);
    Ok(spec)
}

/// Stores a validated spec override (and serves it at once from this isolate).
pub async fn save(kv: &Kv, spec: &WorkflowSpec) -> AppResult<()> {
    kv.put_json(&key(&spec.id), spec, None).await?;
    remember(spec, now_ms());
    Ok(())
}

fn remember(spec: &WorkflowSpec, at: u64) {
    SPECS.with(|specs| {
        specs
            .borrow_mut()
            .insert(spec.id.clone(), (spec.clone(), at))
    });
}

fn key(id: &str) -> String {
    format!("workflow:{id}")
}

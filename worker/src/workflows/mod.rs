//! Workflow specs over HTTP: `GET /api/workflows/:id` (the override, else the built-in) and
//! `PUT /api/workflows/:id` (admin: a validated override).

pub mod store;

use stepwise_core::workflow::WorkflowSpec;
use worker::{Env, Request, Response};

use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;

/// `GET /api/workflows/:id`.
pub async fn get(env: &Env, id: &str) -> AppResult<Response> {
    let spec = store::load(&Kv::new(env)?, id).await?;
    Ok(Response::from_json(&spec)?)
}

/// `PUT /api/workflows/:id`: stores a validated override (the router checked the admin token).
pub async fn put(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    let value: serde_json::Value = read_json(&mut req).await?;
    let spec = WorkflowSpec::from_value(value)?;
    if spec.id != id {
        return Err(AppError::invalid_spec_id(&spec.id, id));
    }
    store::save(&Kv::new(env)?, &spec).await?;
    Ok(Response::from_json(&spec)?)
}

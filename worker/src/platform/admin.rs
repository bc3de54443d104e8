//! Admin routes: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time.

use worker::{Env, Request};

use super::error::{AppError, AppResult};
use super::ids;

/// Checks the admin token (403 `forbidden` when no token is set or it differs). `what` names
/// the routes in the message ("workflow overrides").
pub fn require_admin(req: &Request, env: &Env, what: &str) -> AppResult<()> {
    let admin = env
        .secret("ADMIN_TOKEN")
        .ok()
        .map(|s| s.to_string())
        .filter(|s| !s.is_empty());
    let Some(admin) = admin else {
        return Err(AppError::forbidden(format!(
            "{what} are disabled: no ADMIN_TOKEN is set"
        )));
    };
    let given = req.headers().get("authorization")?.unwrap_or_default();
    let token = given.strip_prefix("Bearer ").unwrap_or_default();
    if !ids::same_secret(token, &admin) {
        return Err(AppError::forbidden("a valid admin token is required"));
    }
    Ok(())
}

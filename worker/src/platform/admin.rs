//! Admin routes: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time, after a rate
//! limit by client IP that bounds guessing (429 past it, right or wrong token alike).

use worker::{Env, Request};

use super::error::{AppError, AppResult};
use super::ids;
use super::limits;

/// The shortest `ADMIN_TOKEN` accepted: a shorter one leaves the admin routes disabled, since a
/// token that can be guessed is no better than none.
pub const MIN_ADMIN_TOKEN_CHARS: usize = 32;

/// Checks the admin token (403 `forbidden` when no token is set, it is shorter than
/// [`MIN_ADMIN_TOKEN_CHARS`], or the request's differs), after the client IP's admin rate limit
/// (429 `rate_limited`). `what` names the routes in the message ("workflow overrides").
pub async fn require_admin(req: &Request, env: &Env, what: &str) -> AppResult<()> {
    limits::admin_rate_limit(req, env).await?;
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
    if admin.chars().count() < MIN_ADMIN_TOKEN_CHARS {
        return Err(AppError::forbidden(format!(
            "{what} are disabled: ADMIN_TOKEN is shorter than {MIN_ADMIN_TOKEN_CHARS} characters"
        )));
    }
    let given = req.headers().get("authorization")?.unwrap_or_default();
    let token = given.strip_prefix("Bearer ").unwrap_or_default();
    if !ids::same_secret(token, &admin) {
        return Err(AppError::forbidden("a valid admin token is required"));
    }
    Ok(())
}

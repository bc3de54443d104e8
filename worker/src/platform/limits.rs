//! Limits on routes that call out: for a model, the kill switch (`MODEL_CALLS_DISABLED=true` answers
//! 503 `model_calls_disabled`), and the Rate Limiting bindings keyed by owner and by client IP
//! (429 `rate_limited` with `Retry-After`). The daily spending caps are [`super::spend`]'s.

use worker::{Env, Request};

use super::error::{AppError, AppResult};
use super::owner::Owner;
use super::settings::var;

/// The Rate Limiting binding keyed by owner (wrangler.toml `ratelimits`).
const BY_OWNER: &str = "OWNER_RATE_LIMIT";
/// The Rate Limiting binding keyed by client IP.
const BY_IP: &str = "IP_RATE_LIMIT";
/// The Rate Limiting binding of admin requests, keyed by client IP.
const BY_IP_ADMIN: &str = "ADMIN_RATE_LIMIT";
/// The period of the bindings, in seconds (what a limited client is told to wait).
pub const PERIOD_SECONDS: u32 = 60;

/// Lets a model route through, or refuses it: the kill switch first, then the owner's and the
/// client IP's rate limits.
pub async fn admit(req: &Request, env: &Env, owner: &Owner) -> AppResult<()> {
    if calls_disabled(env) {
        return Err(AppError::model_calls_disabled());
    }
    rate_limit(req, env, owner).await
}

/// The owner's and the client IP's rate limits alone (routes that call an upstream service
/// other than a model, such as PubMed).
pub async fn rate_limit(req: &Request, env: &Env, owner: &Owner) -> AppResult<()> {
    let ip = client_ip(req)?;
    // In turn: a request the owner's limit refuses does not spend the address's, which other
    // people behind the same address share.
    for (binding, key) in [
        (BY_OWNER, format!("owner:{}", owner.id)),
        (BY_IP, format!("ip:{ip}")),
    ] {
        let limiter = env.rate_limiter(binding).map_err(|_| {
            AppError::misconfigured(format_args!("the {binding} binding is missing"))
        })?;
        if !limiter.limit(key).await?.success {
            return Err(AppError::rate_limited(PERIOD_SECONDS));
        }
    }
    Ok(())
}

/// The client IP's limit on admin requests, counted before the token is checked.
pub async fn admin_rate_limit(req: &Request, env: &Env) -> AppResult<()> {
    let limiter = env.rate_limiter(BY_IP_ADMIN).map_err(|_| {
        AppError::misconfigured(format_args!("the {BY_IP_ADMIN} binding is missing"))
    })?;
    if !limiter
        .limit(format!("admin:{}", client_ip(req)?))
        .await?
        .success
    {
        return Err(AppError::rate_limited(PERIOD_SECONDS));
    }
    Ok(())
}

/// The client's address as Cloudflare reports it (`unknown` without one, as in local tests).
fn client_ip(req: &Request) -> AppResult<String> {
    Ok(req
        .headers()
        .get("cf-connecting-ip")?
        .unwrap_or_else(|| "unknown".to_owned()))
}

/// Whether the kill switch is on.
pub fn calls_disabled(env: &Env) -> bool {
    var(env, "MODEL_CALLS_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

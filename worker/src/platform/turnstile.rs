//! The optional Turnstile check before a new anonymous owner's first model call. With
//! `TURNSTILE_SECRET` set, the spending guard refuses the first charge of an identity it has
//! never counted (403 `challenge_required`, naming `TURNSTILE_SITE_KEY`) unless the request
//! carries a token (`cf-turnstile-response` header) that Turnstile's siteverify endpoint
//! (`TURNSTILE_VERIFY_URL`) accepts. Identities are free to mint; a solved challenge is not.
//! Once a call of the owner was counted, no challenge is asked again.

use std::time::Duration;

use serde::Deserialize;
use worker::{Env, Headers, Method, Request, RequestInit, console_warn};

use super::deadline::fetch_within;
use super::error::{AppError, AppResult};
use super::settings::var;

/// The header a client sends the widget's token in.
pub const TOKEN_HEADER: &str = "cf-turnstile-response";
/// Turnstile's verification endpoint.
const DEFAULT_VERIFY_URL: &str = "https://challenges.cloudflare.com/turnstile/v0/siteverify";
/// Longest wait for siteverify.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest token read from a request (Turnstile's tokens are about 2 KB).
const MAX_TOKEN_LEN: usize = 4096;

/// Whether the check is on (`TURNSTILE_SECRET` set).
pub fn enabled(env: &Env) -> bool {
    secret(env).is_some()
}

fn secret(env: &Env) -> Option<String> {
    env.secret("TURNSTILE_SECRET")
        .ok()
        .map(|s| s.to_string())
        .filter(|s| !s.trim().is_empty())
}

/// 403 `challenge_required`: what a client is told when a new identity's first call needs a
/// solved challenge.
pub fn required(env: &Env) -> AppError {
    let site_key = var(env, "TURNSTILE_SITE_KEY").unwrap_or_default();
    AppError::challenge_required(format!(
        "a new visitor's first model call needs a Turnstile check: render the widget with site key `{site_key}` and send its token in the {TOKEN_HEADER} header"
    ))
}

/// siteverify's answer (the fields used).
#[derive(Deserialize)]
struct Verdict {
    success: bool,
    #[serde(default, rename = "error-codes")]
    error_codes: Vec<String>,
}

/// Whether the request carries a token siteverify accepts: false without the check, without a
/// token, when siteverify refuses it, and when siteverify cannot be asked (logged): a request
/// never fails for it, and only an identity the spending guard never counted needs it.
pub async fn verified(req: &Request, env: &Env, address: Option<&str>) -> AppResult<bool> {
    match ask_siteverify(req, env, address).await {
        Ok(verdict) => Ok(verdict),
        Err(error) => {
            console_warn!("turnstile: token not verified: {error}");
            Ok(false)
        }
    }
}

async fn ask_siteverify(req: &Request, env: &Env, address: Option<&str>) -> AppResult<bool> {
    let Some(secret) = secret(env) else {
        return Ok(false);
    };
    let token = req.headers().get(TOKEN_HEADER)?.unwrap_or_default();
    if token.is_empty() || token.len() > MAX_TOKEN_LEN {
        return Ok(false);
    }
    let url = var(env, "TURNSTILE_VERIFY_URL").unwrap_or_else(|| DEFAULT_VERIFY_URL.to_owned());
    let mut form = format!(
        "secret={}&response={}",
        js_encode(&secret),
        js_encode(&token)
    );
    if let Some(address) = address {
        form.push_str(&format!("&remoteip={}", js_encode(address)));
    }
    let headers = Headers::new();
    headers.set("content-type", "application/x-www-form-urlencoded")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(form.into()));
    let request = Request::new_with_init(&url, &init)?;
    let mut response = fetch_within(request, VERIFY_TIMEOUT)
        .await
        .map_err(|_| AppError::upstream_unreachable("Turnstile's siteverify"))?;
    let verdict: Verdict = response
        .json()
        .await
        .map_err(|_| AppError::upstream_unreachable("Turnstile's siteverify"))?;
    if !verdict.success {
        console_warn!("turnstile: token refused: {:?}", verdict.error_codes);
    }
    Ok(verdict.success)
}

/// `encodeURIComponent`.
fn js_encode(text: &str) -> String {
    String::from(worker::js_sys::encode_uri_component(text))
}

//! Who a request is for. With Cloudflare Access configured (`ACCESS_TEAM_DOMAIN`, `ACCESS_AUD`)
//! the owner is the `sub` of a verified `Cf-Access-Jwt-Assertion`; otherwise it is the holder of
//! an anonymous owner token the client made (`Authorization: Bearer <32 hex digits>`). Either way
//! the owner id is the hex SHA-256 of the identity, and no token is ever stored.

use std::cell::RefCell;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use stepwise_core::owner::{self, AccessToken, AuthError, OwnerKind, is_owner_token};
use worker::{Env, Request, js_sys};

use super::crypto::{self, CryptoKey};
use super::deadline::{fetch_within, now_ms};
use super::error::{AppError, AppResult};
use super::settings::var;
use super::turnstile;

/// Header Access puts its assertion in.
const ASSERTION_HEADER: &str = "cf-access-jwt-assertion";
/// How long the team's keys are used before they are fetched again, in ms.
const KEYS_FRESH_MS: u64 = 60 * 60 * 1000;
/// Least time between two fetches of the keys (an unknown key id refetches at most this often).
const REFETCH_MS: u64 = 60 * 1000;
/// Longest wait for the team's keys.
const KEYS_TIMEOUT: Duration = Duration::from_secs(5);

/// The owner of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// The owner id: hex SHA-256 of the identity (what owned data is keyed by).
    pub id: String,
    /// How the owner proved who they are.
    pub kind: OwnerKind,
    /// The e-mail address of an Access identity, to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The client's network, for an anonymous owner: the hex HMAC-SHA-256 (under
    /// `NETWORK_HASH_KEY`; SHA-256 without it) of its address key (`core::spend::address_key`), what the spending guard also counts such owners' calls
    /// under. It travels with a turn to the conversation's object (whose model calls are
    /// charged there) and is kept only as a spending shard's counter key, for the day; never
    /// the address itself. `None` for Access identities, server-started work and requests
    /// without an address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Whether the request carried a Turnstile token that siteverify accepted
    /// (`turnstile.rs`): what lets a new anonymous identity make its first model call while
    /// the check is on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verified: bool,
}

/// Cloudflare Access, when configured.
struct Access {
    /// `https://<team>.cloudflareaccess.com` (the issuer; keys at `/cdn-cgi/access/certs`).
    team: String,
    /// The application's audience tag.
    audience: String,
}

impl Access {
    fn from_env(env: &Env) -> Option<Access> {
        let team = var(env, "ACCESS_TEAM_DOMAIN")?;
        let audience = var(env, "ACCESS_AUD")?;
        let team = team.trim().trim_end_matches('/');
        let team = if team.contains("://") {
            team.to_owned()
        } else {
            format!("https://{team}")
        };
        Some(Access { team, audience })
    }
}

/// The request's owner, or 401 (`owner_required`, `invalid_token`).
pub async fn require(req: &Request, env: &Env) -> AppResult<Owner> {
    match Access::from_env(env) {
        Some(access) => access_owner(req, &access).await,
        None => anonymous_owner(req, env).await,
    }
}

/// Whether Cloudflare Access decides who owners are.
pub fn uses_access(env: &Env) -> bool {
    Access::from_env(env).is_some()
}

/// The subprotocol a browser's WebSocket names (it cannot set `Authorization`); the owner token
/// travels as a second one, `bearer.<token>`, and is never echoed back.
pub const WS_PROTOCOL: &str = "stepwise.v1";

async fn anonymous_owner(req: &Request, env: &Env) -> AppResult<Owner> {
    let header = req.headers().get("authorization")?.unwrap_or_default();
    let protocols = req
        .headers()
        .get("sec-websocket-protocol")?
        .unwrap_or_default();
    let token = header
        .strip_prefix("Bearer ")
        .map(str::trim)
        .or_else(|| {
            protocols
                .split(',')
                .find_map(|p| p.trim().strip_prefix("bearer."))
        })
        .ok_or(AuthError::OwnerRequired)?;
    if !is_owner_token(token) {
        return Err(AuthError::InvalidOwnerToken.into());
    }
    let address = req.headers().get("cf-connecting-ip")?.unwrap_or_default();
    let network = match stepwise_core::spend::address_key(&address) {
        Some(key) => Some(network_hash(env, &key).await?),
        None => None,
    };
    let address = (!address.is_empty()).then_some(address.as_str());
    Ok(Owner {
        id: hash_identity(OwnerKind::Anonymous, token).await?,
        kind: OwnerKind::Anonymous,
        email: None,
        network,
        verified: turnstile::verified(req, env, address).await?,
    })
}

/// A client network's hash: HMAC-SHA-256 of its address key under the `NETWORK_HASH_KEY` secret
/// when it is set, so that a stored hash cannot be turned back into the address by hashing every
/// address there is; plain SHA-256 otherwise. Changing the key starts the day's network counts
/// again.
async fn network_hash(env: &Env, key: &str) -> AppResult<String> {
    let secret = env
        .secret("NETWORK_HASH_KEY")
        .ok()
        .map(|s| s.to_string())
        .filter(|s| !s.is_empty());
    let digest = match secret {
        Some(secret) => crypto::hmac_sha256(secret.as_bytes(), key.as_bytes()).await?,
        None => crypto::sha256(key.as_bytes()).await?,
    };
    Ok(owner::hex(&digest))
}

async fn access_owner(req: &Request, access: &Access) -> AppResult<Owner> {
    let assertion = req
        .headers()
        .get(ASSERTION_HEADER)?
        .ok_or(AuthError::AccessRequired)?;
    let token = AccessToken::parse(assertion.trim())?;
    token.check(now_ms() / 1000, &access.audience, &access.team)?;
    let key = team_key(access, &token.kid)
        .await?
        .ok_or(AuthError::UnknownKey)?;
    let signed = token.signing_input.as_bytes();
    if !crypto::verify_rs256(&key, &token.signature, signed).await? {
        return Err(AuthError::BadSignature.into());
    }
    Ok(Owner {
        id: hash_identity(OwnerKind::Access, &token.claims.sub).await?,
        kind: OwnerKind::Access,
        email: token.claims.email,
        network: None,
        verified: false,
    })
}

/// The hex SHA-256 of an identity (also used for stored conversation tokens).
pub async fn hash_identity(kind: OwnerKind, subject: &str) -> AppResult<String> {
    let digest = crypto::sha256(owner::identity(kind, subject).as_bytes()).await?;
    Ok(owner::hex(&digest))
}

/// The team's keys, fetched from `/cdn-cgi/access/certs` and kept per isolate.
#[derive(Default)]
struct TeamKeys {
    keys: Vec<(String, CryptoKey)>,
    fetched_at: u64,
    tried_at: u64,
}

thread_local! {
    static KEYS: RefCell<TeamKeys> = RefCell::new(TeamKeys::default());
}

/// The team key with id `kid`: from the cache while it is fresh, else fetched again (at most
/// once a minute, so an attacker's unknown key ids cannot make the Worker hammer the team).
async fn team_key(access: &Access, kid: &str) -> AppResult<Option<CryptoKey>> {
    let now = now_ms();
    let cached = KEYS.with(|keys| {
        let keys = keys.borrow();
        let fresh = now.saturating_sub(keys.fetched_at) < KEYS_FRESH_MS;
        let found = keys
            .keys
            .iter()
            .find(|(id, _)| id == kid)
            .map(|(_, k)| k.clone());
        (
            found.filter(|_| fresh),
            now.saturating_sub(keys.tried_at) >= REFETCH_MS,
        )
    });
    match cached {
        (Some(key), _) => Ok(Some(key)),
        (None, false) => Ok(None),
        (None, true) => {
            KEYS.with(|keys| keys.borrow_mut().tried_at = now);
            let fetched = fetch_keys(access).await?;
            let found = fetched
                .iter()
                .find(|(id, _)| id == kid)
                .map(|(_, k)| k.clone());
            KEYS.with(|keys| {
                let mut keys = keys.borrow_mut();
                keys.keys = fetched;
                keys.fetched_at = now;
            });
            Ok(found)
        }
    }
}

async fn fetch_keys(access: &Access) -> AppResult<Vec<(String, CryptoKey)>> {
    let url = format!("{}/cdn-cgi/access/certs", access.team);
    let request = Request::new(&url, worker::Method::Get)?;
    let mut response = fetch_within(request, KEYS_TIMEOUT)
        .await
        .map_err(|failure| AppError::internal(&format_args!("access keys: {failure:?}")))?;
    if response.status_code() != 200 {
        let status = response.status_code();
        return Err(AppError::internal(&format_args!(
            "access keys answered {status}"
        )));
    }
    let text = response.text().await?;
    let jwks =
        js_sys::JSON::parse(&text).map_err(|_| AppError::internal(&"access keys are not JSON"))?;
    let list = js_sys::Reflect::get(&jwks, &"keys".into())
        .ok()
        .map(|keys| js_sys::Array::from(&keys))
        .unwrap_or_default();
    let mut keys = Vec::new();
    for jwk in list.iter() {
        let kid = js_sys::Reflect::get(&jwk, &"kid".into())
            .ok()
            .and_then(|k| k.as_string());
        let Some(kid) = kid else { continue };
        // A key that is not an RSA signing key is skipped, not fatal.
        if let Ok(key) = crypto::import_rs256_jwk(&jwk).await {
            keys.push((kid, key));
        }
    }
    Ok(keys)
}

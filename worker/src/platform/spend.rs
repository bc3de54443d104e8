//! The spending guard: one Durable Object per UTC day (`SpendGuard`, named by the date) counts
//! model calls and estimated tokens per owner and in total, and refuses a charge past the caps
//! `MODEL_CALLS_PER_OWNER_PER_DAY` and `MODEL_CALLS_PER_DAY` (429 `quota_exceeded`) before any
//! upstream request. The rules are `core::spend`; the object loads, applies and saves.
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use serde::{Deserialize, Serialize};
use stepwise_core::dates;
use stepwise_core::spend::{self, Caps, Charge, QuotaError, Usage};
use worker::{
    DurableObject, Env, Method, Request, RequestInit, Response, Result, State, durable_object,
};

use super::deadline::now_ms;
use super::error::{AppError, AppResult};
use super::objects;
use super::owner::Owner;
use super::settings::number;

/// The Durable Object binding's name in wrangler.toml.
const BINDING: &str = "SPEND_GUARD";
/// Default most model calls of one owner per UTC day.
pub const DEFAULT_PER_OWNER: u64 = 200;
/// Default most model calls of all owners together per UTC day.
pub const DEFAULT_TOTAL: u64 = 5_000;
/// How long a day's counters are kept after the day, in ms.
const KEEP_MS: u64 = 2 * 24 * 3600 * 1000;

/// A request to the day's guard.
#[derive(Debug, Serialize, Deserialize)]
struct Ask {
    owner: String,
    charge: Charge,
    caps: Caps,
    /// Give the charge back instead (its calls were not made).
    refund: bool,
}

/// What the guard answers: the owner's usage of the day after the request.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Spent {
    /// The owner's calls and tokens today.
    pub usage: Usage,
}

/// The caps from the settings.
fn caps(env: &Env) -> Caps {
    Caps {
        per_owner: Some(number(env, "MODEL_CALLS_PER_OWNER_PER_DAY").unwrap_or(DEFAULT_PER_OWNER)),
        total: Some(number(env, "MODEL_CALLS_PER_DAY").unwrap_or(DEFAULT_TOTAL)),
    }
}

/// Counts `charge` for `owner` today, or refuses it (429 `quota_exceeded`). A charge of no
/// calls (offline providers only) is not sent.
pub async fn charge(env: &Env, owner: &Owner, charge: Charge) -> AppResult<()> {
    if charge.calls == 0 {
        return Ok(());
    }
    ask(env, owner, charge, false).await.map(|_| ())
}

/// Gives back a charge whose calls were not made.
pub async fn refund(env: &Env, owner: &Owner, charge: Charge) -> AppResult<()> {
    if charge.calls == 0 {
        return Ok(());
    }
    ask(env, owner, charge, true).await.map(|_| ())
}

/// The owner's usage today (for `GET /api/me`).
pub async fn usage(env: &Env, owner: &Owner) -> AppResult<Usage> {
    Ok(ask(env, owner, Charge::default(), false).await?.usage)
}

async fn ask(env: &Env, owner: &Owner, charge: Charge, refund: bool) -> AppResult<Spent> {
    let ask = Ask {
        owner: owner.id.clone(),
        charge,
        caps: caps(env),
        refund,
    };
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(serde_json::to_string(&ask)?.into()));
    let request = Request::new_with_init("https://spend.internal/", &init)?;
    let day = dates::day(now_ms());
    let mut answer = objects::fetch(env, BINDING, &day, request).await?;
    match answer.status_code() {
        200 => Ok(answer.json().await?),
        429 => Err(AppError::quota_exceeded(&answer.text().await?)),
        status => Err(AppError::internal(&format_args!("spend guard answered {status}"))),
    }
}

/// The Durable Object class `SpendGuard` (wrangler.toml), one instance per UTC day.
#[durable_object]
pub struct SpendGuard {
    state: State,
}

impl DurableObject for SpendGuard {
    fn new(state: State, _env: Env) -> Self {
        SpendGuard { state }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        // The request is read whole before the counters are loaded (see the research job's
        // object for why).
        let ask: Ask = req.json().await?;
        let storage = self.state.storage();
        let owner_key = format!("owner:{}", ask.owner);
        let mut owner = storage.get::<Usage>(&owner_key).await?.unwrap_or_default();
        let mut total = storage.get::<Usage>("total").await?.unwrap_or_default();
        if ask.refund {
            spend::refund(&mut owner, &mut total, ask.charge);
        } else if let Err(error) = spend::charge(&mut owner, &mut total, ask.charge, &ask.caps) {
            return Response::error(quota_message(&error), 429);
        }
        if ask.charge != Charge::default() {
            storage.put(&owner_key, owner).await?;
            storage.put("total", total).await?;
            if storage.get_alarm().await?.is_none() {
                storage.set_alarm(KEEP_MS as i64).await?;
            }
        }
        Response::from_json(&Spent { usage: owner })
    }

    async fn alarm(&self) -> Result<Response> {
        // The day is long over: its counters are no longer needed.
        self.state.storage().delete_all().await?;
        Response::ok("")
    }
}

fn quota_message(error: &QuotaError) -> String {
    error.to_string()
}

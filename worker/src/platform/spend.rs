//! The spending guard: one Durable Object per UTC day (`SpendGuard`, named by the date) counts
//! model calls and estimated tokens per owner and in total, and refuses a charge past the caps
//! `MODEL_CALLS_PER_OWNER_PER_DAY` and `MODEL_CALLS_PER_DAY` (429 `quota_exceeded`) before any
//! upstream request. The rules are `core::spend`; the object loads, applies and saves. Its
//! protocol is plain: the ask in query parameters, counters as text (`"<calls> <tokens>"`).
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use stepwise_core::dates;
use stepwise_core::spend::{self, Caps, Charge, Usage};
use worker::{DurableObject, Env, Method, Request, Response, Result, State, durable_object};

use super::deadline::now_ms;
use super::error::{AppError, AppResult};
use super::objects;
use super::owner::Owner;
use super::settings::number;
use super::url_parts::query_param;

/// The Durable Object binding's name in wrangler.jsonc.
const BINDING: &str = "SPEND_GUARD";
/// Default most model calls of one owner per UTC day.
pub const DEFAULT_PER_OWNER: u64 = 200;
/// Default most model calls of all owners together per UTC day.
pub const DEFAULT_TOTAL: u64 = 5_000;
/// How long a day's counters are kept after the object first counted, in ms.
const KEEP_MS: i64 = 2 * 24 * 3600 * 1000;

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
    ask(env, owner, Charge::default(), false).await
}

async fn ask(env: &Env, owner: &Owner, charge: Charge, refund: bool) -> AppResult<Usage> {
    let per_owner: u64 = number(env, "MODEL_CALLS_PER_OWNER_PER_DAY").unwrap_or(DEFAULT_PER_OWNER);
    let total: u64 = number(env, "MODEL_CALLS_PER_DAY").unwrap_or(DEFAULT_TOTAL);
    let url = format!(
        "https://spend.internal/?owner={}&calls={}&tokens={}&per_owner={per_owner}&total={total}&refund={}",
        owner.id,
        charge.calls,
        charge.tokens,
        u8::from(refund)
    );
    let request = Request::new(&url, Method::Post)?;
    let mut answer = objects::fetch(env, BINDING, &dates::day(now_ms()), request).await?;
    let text = answer.text().await?;
    match answer.status_code() {
        200 => Usage::parse(&text)
            .ok_or_else(|| AppError::internal(&"the spend guard's answer is not counters")),
        429 => Err(AppError::quota_exceeded(&text)),
        status => Err(AppError::internal(&format_args!(
            "spend guard answered {status}"
        ))),
    }
}

/// The Durable Object class `SpendGuard` (wrangler.jsonc), one instance per UTC day.
#[durable_object]
pub struct SpendGuard {
    state: State,
}

impl DurableObject for SpendGuard {
    fn new(state: State, _env: Env) -> Self {
        SpendGuard { state }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let url = req.inner().url();
        let number = |name: &str| query_param(&url, name).and_then(|v| v.parse::<u64>().ok());
        let owner = query_param(&url, "owner").unwrap_or_default();
        let charge = Charge {
            calls: number("calls").unwrap_or(0),
            tokens: number("tokens").unwrap_or(0),
        };
        let caps = Caps {
            per_owner: number("per_owner"),
            total: number("total"),
        };
        let storage = self.state.storage();
        let owner_key = format!("owner:{owner}");
        let stored =
            |text: Option<String>| text.as_deref().and_then(Usage::parse).unwrap_or_default();
        let mut mine = stored(storage.get::<String>(&owner_key).await?);
        let mut all = stored(storage.get::<String>("total").await?);
        if number("refund") == Some(1) {
            spend::refund(&mut mine, &mut all, charge);
        } else if let Err(error) = spend::charge(&mut mine, &mut all, charge, &caps) {
            return Response::error(error.to_string(), 429);
        }
        if charge != Charge::default() {
            storage.put(&owner_key, mine.to_text()).await?;
            storage.put("total", all.to_text()).await?;
            if storage.get_alarm().await?.is_none() {
                storage.set_alarm(KEEP_MS).await?;
            }
        }
        Response::ok(mine.to_text())
    }

    async fn alarm(&self) -> Result<Response> {
        // The day is long over: its counters are no longer needed.
        self.state.storage().delete_all().await?;
        Response::ok("")
    }
}

//! The spending guard: one Durable Object per UTC day (`SpendGuard`, named by the date) counts
//! model calls and estimated tokens per owner and in total, and refuses a charge past the caps
//! `MODEL_CALLS_PER_OWNER_PER_DAY` and `MODEL_CALLS_PER_DAY` (429 `quota_exceeded`) before any
//! upstream request. The rules are `core::spend`; the object loads, applies and saves. Its
//! protocol is plain: the ask in query parameters, counters as text (`"<calls> <tokens>"`).
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use std::cell::RefCell;
use std::collections::HashMap;

use stepwise_core::dates;
use stepwise_core::spend::{self, Caps, Charge, Usage};
use worker::{
    DurableObject, Env, Request, Response, Result, State, Storage, durable_object, js_sys,
};

use super::deadline::now_ms;
use super::error::{AppError, AppResult};
use super::js::{ObjectCall, call_object};
use super::owner::Owner;
use super::settings::number;
use super::url_parts::query_param;

/// The Durable Object binding's name in wrangler.toml.
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
    let call = ObjectCall {
        method: "POST",
        url: &url,
        headers: &[],
        body: None,
    };
    let (status, text) = call_object(env, BINDING, &dates::day(now_ms()), call).await?;
    match status {
        200 => Usage::parse(&text)
            .ok_or_else(|| AppError::internal(&"the spend guard's answer is not counters")),
        429 => Err(AppError::quota_exceeded(&text)),
        status => Err(AppError::internal(&format_args!(
            "spend guard answered {status}"
        ))),
    }
}

/// The Durable Object class `SpendGuard` (wrangler.toml), one instance per UTC day. The counters
/// it has read are kept in memory too: the object is their only writer and handles one request
/// at a time around its storage calls, so after the first read of a key only writes remain.
#[durable_object]
pub struct SpendGuard {
    state: State,
    known: RefCell<Known>,
}

/// What the instance has read or written so far.
#[derive(Default)]
struct Known {
    /// The day's total, once read.
    total: Option<Usage>,
    /// Each owner's counters, once read.
    owners: HashMap<String, Usage>,
    /// Whether the alarm that clears the day is known to be set.
    alarm_set: bool,
}

impl DurableObject for SpendGuard {
    fn new(state: State, _env: Env) -> Self {
        SpendGuard {
            state,
            known: RefCell::new(Known::default()),
        }
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
        let (mut mine, mut all) = self.counters(&storage, &owner, &owner_key).await?;
        if number("refund") == Some(1) {
            spend::refund(&mut mine, &mut all, charge);
        } else if let Err(error) = spend::charge(&mut mine, &mut all, charge, &caps) {
            return Response::error(error.to_string(), 429);
        }
        if charge != Charge::default() {
            let values = js_sys::Object::new();
            let set = |key: &str, usage: &Usage| {
                js_sys::Reflect::set(&values, &key.into(), &usage.to_text().into())
            };
            set(&owner_key, &mine)?;
            set("total", &all)?;
            storage.put_multiple_raw(values).await?;
            let alarm_set = {
                let mut known = self.known.borrow_mut();
                known.owners.insert(owner, mine);
                known.total = Some(all);
                known.alarm_set
            };
            if !alarm_set {
                if storage.get_alarm().await?.is_none() {
                    storage.set_alarm(KEEP_MS).await?;
                }
                self.known.borrow_mut().alarm_set = true;
            }
        }
        Response::ok(mine.to_text())
    }

    async fn alarm(&self) -> Result<Response> {
        // The day is long over: its counters are no longer needed.
        self.state.storage().delete_all().await?;
        *self.known.borrow_mut() = Known::default();
        Response::ok("")
    }
}

impl SpendGuard {
    /// The owner's counters and the total: from memory when known, else from storage. Sound
    /// only because every await of a charge is a storage call, during which the object's input
    /// gate holds other requests back: a charge reads and writes with no other in between. An
    /// await of anything else there would let two charges interleave and lose one.
    async fn counters(
        &self,
        storage: &Storage,
        owner: &str,
        owner_key: &str,
    ) -> Result<(Usage, Usage)> {
        let stored =
            |text: Option<String>| text.as_deref().and_then(Usage::parse).unwrap_or_default();
        let (mine, all) = {
            let known = self.known.borrow();
            (known.owners.get(owner).copied(), known.total)
        };
        let mine = match mine {
            Some(usage) => usage,
            None => stored(storage.get::<String>(owner_key).await?),
        };
        let all = match all {
            Some(usage) => usage,
            None => stored(storage.get::<String>("total").await?),
        };
        Ok((mine, all))
    }
}

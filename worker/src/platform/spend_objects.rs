//! The spending guard's Durable Objects: `SpendShard` (named `shard-<n>`) counts the owners and
//! client networks whose hash falls in it and holds blocks of the day's budget; `SpendGuard`
//! (named by the UTC day) is that budget. Both keep what they read in memory: each is the only
//! writer of its storage, and every change is made in memory before the storage call that
//! saves it, so two requests never work on stale copies. The rules are `core::spend`; the
//! protocol is plain: the ask in query parameters, answers as text.
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use std::cell::RefCell;
use std::collections::HashMap;

use stepwise_core::dates;
use stepwise_core::spend::{self, Budget, Charge, Counter, Grant, Leases, Pool, Step};
use worker::{
    DurableObject, Env, ListOptions, Request, Response, Result, State, Storage, durable_object,
    js_sys,
};

use super::deadline::now_ms;
use super::js::{ObjectCall, call_object};
use super::spend::{BUDGET_BINDING, Kind, Settings, refusal, refusal_text};
use super::url_parts::query_param;

const DAY_MS: u64 = 24 * 3600 * 1000;
/// How long an owner's counter is kept after the last day it counted: it remembers when the
/// owner was first seen, which decides their pool.
const OWNER_KEEP_DAYS: u64 = 90;
/// The storage keys of tallies (`c:t:<key>`), kept for their day only.
const TALLY_PREFIX: &str = "c:t:";
/// How long a day budget's object keeps its counts after it first counted, in ms.
const BUDGET_KEEP_MS: i64 = 2 * DAY_MS as i64;

/// One shard of the guard's counters (wrangler.toml `SPEND_SHARD`).
#[durable_object]
pub struct SpendShard {
    state: State,
    env: Env,
    known: RefCell<ShardMemory>,
}

/// What a shard instance has read or written so far.
#[derive(Default)]
struct ShardMemory {
    /// Counters by storage key (`c:o:<owner>`, `c:n:<network>` or a tally's `c:t:<key>`).
    counters: HashMap<String, Counter>,
    /// The blocks held, once read.
    leases: Option<Leases>,
    /// Whether the daily pruning alarm is known to be set.
    alarm_set: bool,
    /// Whether a block is being leased, per pool (established, new): a charge short of calls
    /// meanwhile asks for exactly what it needs instead of a block of its own.
    leasing: [bool; 2],
}

impl DurableObject for SpendShard {
    fn new(state: State, env: Env) -> Self {
        SpendShard {
            state,
            env,
            known: RefCell::new(ShardMemory::default()),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let url = req.inner().url();
        let number = |name: &str| query_param(&url, name).and_then(|v| v.parse::<u64>().ok());
        let settings = Settings::from_query(number);
        let storage = self.state.storage();
        let kind = match query_param(&url, "kind").as_deref() {
            Some("owner") => Kind::Owner,
            Some("network") => Kind::Network,
            Some("report") => {
                let leases = self.leases(&storage).await?;
                return Response::ok(leases.on(now_ms()).to_text());
            }
            Some("tally") => {
                let key = query_param(&url, "key").unwrap_or_default();
                let cap = number("cap").unwrap_or(0);
                return self
                    .tally(&storage, &key, cap, number("refund") == Some(1))
                    .await;
            }
            _ => return Response::error("kind must be owner, network, tally or report", 400),
        };
        let key = query_param(&url, "key").unwrap_or_default();
        let prefix = if kind == Kind::Owner { "o" } else { "n" };
        let counter_key = format!("c:{prefix}:{key}");
        let charge = Charge {
            calls: number("calls").unwrap_or(0),
            tokens: number("tokens").unwrap_or(0),
        };
        let now = now_ms();
        let (mut counter, known) = self.counter(&storage, &counter_key, now).await?;
        if charge == Charge::default() {
            return Response::ok(counter.usage_on(now).to_text());
        }
        let caps = &settings.caps;
        let after = settings.established_after_ms;
        if number("refund") == Some(1) {
            let mut leases = self.leases(&storage).await?;
            let owner_leases = (kind == Kind::Owner).then_some(&mut leases);
            let back = spend::refund(&mut counter, owner_leases, charge, caps, now, after);
            // A plain refund keeps the identity even with nothing left on it (it had a call
            // counted, and passed any check for it); one undoing the other shard's refusal
            // forgets a blank one.
            let keep = number("forget") != Some(1);
            let owner_leases = (kind == Kind::Owner).then_some(&leases);
            self.save(&storage, &counter_key, &counter, owner_leases, keep)
                .await?;
            if let Some((pool, calls)) = back
                && let Err(error) = self.give_back(&settings, &leases.day, pool, calls).await
            {
                worker::console_warn!("spend: {calls} calls not given back to the budget: {error}");
            }
            return Response::ok(counter.usage.to_text());
        }
        if kind == Kind::Network {
            if let Err(error) = spend::charge_address(&mut counter, charge, caps, now) {
                return Response::error(refusal_text(&error, caps), 429);
            }
            self.save(&storage, &counter_key, &counter, None, false)
                .await?;
            return Response::ok(counter.usage.to_text());
        }
        // A new identity's first call while the Turnstile check is on needs a solved one.
        if !known && number("challenge") == Some(1) {
            return Response::error("challenge", 403);
        }
        let mut leases = self.leases(&storage).await?;
        let outcome = match spend::charge_owner(&mut counter, &mut leases, charge, caps, now, after)
        {
            Ok(Step::Charged) => Ok(()),
            Err(error) => Err(error),
            Ok(Step::NeedLease { pool, calls }) => {
                let day = leases.day.clone();
                // Other requests may run while the budget answers: start again from memory.
                let grant = self.lease(&settings, &day, pool, calls).await?;
                // The clock again too: the day may have turned while the budget answered.
                let now = now_ms();
                counter = self.counter(&storage, &counter_key, now).await?.0;
                leases = self.leases(&storage).await?;
                let asked = (pool, day.as_str());
                spend::settle_owner(
                    &mut counter,
                    &mut leases,
                    charge,
                    caps,
                    now,
                    after,
                    asked,
                    &grant,
                )
            }
        };
        // Saved either way: a grant may have added blocks even when the charge was refused.
        self.save(&storage, &counter_key, &counter, Some(&leases), false)
            .await?;
        match outcome {
            Ok(()) => Response::ok(counter.usage.to_text()),
            Err(error) => Response::error(refusal_text(&error, caps), 429),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        // Daily: drop network counters and tallies of earlier days, and owners unseen for
        // OWNER_KEEP_DAYS.
        let now = now_ms();
        let today = dates::day(now);
        let oldest_owner_day = dates::day(now.saturating_sub(OWNER_KEEP_DAYS * DAY_MS));
        let storage = self.state.storage();
        let listed = storage
            .list_with_options(ListOptions::new().prefix("c:"))
            .await?;
        let mut stale = Vec::new();
        for entry in listed.entries() {
            let pair = js_sys::Array::from(&entry?);
            let key = pair.get(0).as_string().unwrap_or_default();
            let counter = pair.get(1).as_string().and_then(|t| Counter::parse(&t));
            let keep = counter.is_some_and(|c| {
                if key.starts_with("c:n:") || key.starts_with(TALLY_PREFIX) {
                    c.day == today
                } else {
                    c.day >= oldest_owner_day
                }
            });
            if !keep {
                stale.push(key);
            }
        }
        for keys in stale.chunks(128) {
            storage.delete_multiple(keys.to_vec()).await?;
        }
        {
            let mut known = self.known.borrow_mut();
            for key in &stale {
                known.counters.remove(key);
            }
        }
        storage.set_alarm(DAY_MS as i64).await?;
        Response::ok("")
    }
}

impl SpendShard {
    /// Counts (or with `refund`, takes back) one action of `key` against its daily `cap`
    /// (`core::spend::tally`): 200 with the day's count, 429 once the cap is reached.
    async fn tally(
        &self,
        storage: &Storage,
        key: &str,
        cap: u64,
        refund: bool,
    ) -> Result<Response> {
        let counter_key = format!("{TALLY_PREFIX}{key}");
        let now = now_ms();
        let (mut counter, _) = self.counter(storage, &counter_key, now).await?;
        if refund {
            spend::untally(&mut counter, now);
        } else if !spend::tally(&mut counter, cap, now) {
            return Response::error("refused", 429);
        }
        self.save(storage, &counter_key, &counter, None, true)
            .await?;
        Response::ok(counter.usage.calls.to_string())
    }

    /// A counter from memory, else from storage, else new (kept in memory only once saved),
    /// and whether it was known (counted before). Sound because the only awaits between
    /// reading it and saving it are storage calls, during which the input gate holds other
    /// requests back (the budget's lease is the exception, after which the caller reads again).
    async fn counter(&self, storage: &Storage, key: &str, now: u64) -> Result<(Counter, bool)> {
        if let Some(counter) = self.known.borrow().counters.get(key) {
            return Ok((counter.clone(), true));
        }
        let Some(stored) = storage
            .get::<String>(key)
            .await?
            .as_deref()
            .and_then(Counter::parse)
        else {
            return Ok((Counter::new(now), false));
        };
        let mut known = self.known.borrow_mut();
        let counter = known
            .counters
            .entry(key.to_owned())
            .or_insert(stored)
            .clone();
        Ok((counter, true))
    }

    async fn leases(&self, storage: &Storage) -> Result<Leases> {
        if let Some(leases) = &self.known.borrow().leases {
            return Ok(leases.clone());
        }
        let stored = storage.get::<String>("leases").await?;
        let leases = stored
            .as_deref()
            .and_then(Leases::parse)
            .unwrap_or_default();
        Ok(self.known.borrow_mut().leases.get_or_insert(leases).clone())
    }

    /// Writes the counter (and the leases) to memory, then to storage in one call. A blank
    /// counter (`Counter::is_blank`: first seen today, nothing counted) is forgotten instead,
    /// unless `keep` (a refund: the identity had a call counted).
    async fn save(
        &self,
        storage: &Storage,
        key: &str,
        counter: &Counter,
        leases: Option<&Leases>,
        keep: bool,
    ) -> Result<()> {
        let blank = !keep && counter.is_blank(now_ms());
        let alarm_set = {
            let mut known = self.known.borrow_mut();
            if blank {
                known.counters.remove(key);
            } else {
                known.counters.insert(key.to_owned(), counter.clone());
            }
            if let Some(leases) = leases {
                known.leases = Some(leases.clone());
            }
            known.alarm_set
        };
        let values = js_sys::Object::new();
        if !blank {
            js_sys::Reflect::set(&values, &key.into(), &counter.to_text().into())?;
        }
        if let Some(leases) = leases {
            js_sys::Reflect::set(&values, &"leases".into(), &leases.to_text().into())?;
        }
        if blank {
            storage.delete(key).await?;
        }
        storage.put_multiple_raw(values).await?;
        if !alarm_set {
            if storage.get_alarm().await?.is_none() {
                storage.set_alarm(DAY_MS as i64).await?;
            }
            self.known.borrow_mut().alarm_set = true;
        }
        Ok(())
    }

    /// Gives `calls` of `pool` back to the budget of `day` (after the state that no longer holds
    /// them was saved).
    async fn give_back(
        &self,
        settings: &Settings,
        day: &str,
        pool: Pool,
        calls: u64,
    ) -> Result<()> {
        let url = format!(
            "https://spend.internal/?give_back={calls}&pool={}{}",
            pool.name(),
            settings.query()
        );
        self.post_budget(day, &url).await.map(|_| ())
    }

    /// Asks the day's budget for at least `calls` calls of `pool`: a block, or exactly `calls`
    /// while another charge's block is on the way.
    async fn lease(&self, settings: &Settings, day: &str, pool: Pool, calls: u64) -> Result<Grant> {
        let slot = usize::from(pool == Pool::New);
        let exact = std::mem::replace(&mut self.known.borrow_mut().leasing[slot], true);
        let url = format!(
            "https://spend.internal/?pool={}&calls={calls}{}{}",
            pool.name(),
            if exact { "&exact=1" } else { "" },
            settings.query()
        );
        let grant = self.ask_budget(day, &url).await;
        if !exact {
            self.known.borrow_mut().leasing[slot] = false;
        }
        grant
    }

    async fn ask_budget(&self, day: &str, url: &str) -> Result<Grant> {
        let (status, text) = self.post_budget(day, url).await?;
        Ok(match status {
            429 => Grant {
                calls: 0,
                refused: Some(refusal(&text)),
            },
            _ => Grant {
                calls: text.trim().parse().unwrap_or(0),
                refused: None,
            },
        })
    }

    /// One request to the budget of `day`: its status (200, or 429 for a refused grant) and text;
    /// any other answer is an error.
    async fn post_budget(&self, day: &str, url: &str) -> Result<(u16, String)> {
        let call = ObjectCall {
            method: "POST",
            url,
            headers: &[],
            body: None,
        };
        let (status, text) = call_object(&self.env, BUDGET_BINDING, day, call)
            .await
            .map_err(|e| worker::Error::RustError(e.to_string()))?;
        match status {
            200 | 429 => Ok((status, text)),
            status => Err(worker::Error::RustError(format!(
                "the day's budget answered {status}: {text}"
            ))),
        }
    }
}

/// The day's budget (wrangler.toml `SPEND_GUARD`), one instance per UTC day, named by it.
#[durable_object]
pub struct SpendGuard {
    state: State,
    known: RefCell<Option<Budget>>,
}

impl DurableObject for SpendGuard {
    fn new(state: State, _env: Env) -> Self {
        SpendGuard {
            state,
            known: RefCell::new(None),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let url = req.inner().url();
        let number = |name: &str| query_param(&url, name).and_then(|v| v.parse::<u64>().ok());
        let settings = Settings::from_query(number);
        let storage = self.state.storage();
        let known = *self.known.borrow();
        let mut budget = match known {
            Some(budget) => budget,
            None => {
                let stored = storage.get::<String>("budget").await?;
                stored
                    .as_deref()
                    .and_then(Budget::parse)
                    .unwrap_or_default()
            }
        };
        if query_param(&url, "read").is_some() {
            return Response::ok(budget.to_text());
        }
        let Some(pool) = query_param(&url, "pool").as_deref().and_then(Pool::parse) else {
            return Response::error("pool must be established or new", 400);
        };
        if let Some(calls) = number("give_back") {
            budget.give_back(pool, calls);
            *self.known.borrow_mut() = Some(budget);
            storage.put("budget", budget.to_text()).await?;
            return Response::ok(budget.to_text());
        }
        let first = budget == Budget::default();
        let wanted = number("calls").unwrap_or(1);
        let grant = if query_param(&url, "exact").is_some() {
            budget.grant_exact(pool, wanted, &settings.caps)
        } else {
            budget.grant(pool, wanted, &settings.caps, settings.shards)
        };
        if let Some(refused) = &grant.refused {
            *self.known.borrow_mut() = Some(budget);
            return Response::error(refusal_text(refused, &settings.caps), 429);
        }
        *self.known.borrow_mut() = Some(budget);
        storage.put("budget", budget.to_text()).await?;
        if first && storage.get_alarm().await?.is_none() {
            storage.set_alarm(BUDGET_KEEP_MS).await?;
        }
        Response::ok(grant.calls.to_string())
    }

    async fn alarm(&self) -> Result<Response> {
        // The day is long over: its budget is no longer needed.
        self.state.storage().delete_all().await?;
        *self.known.borrow_mut() = None;
        Response::ok("")
    }
}

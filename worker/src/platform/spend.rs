//! The spending guard, as handlers use it: [`charge`] before any upstream request, [`refund`]
//! when the calls were not made, [`usage`] for `GET /api/me`, and [`count_handoff`] before a
//! help session goes to a person. Refusals are 429 `quota_exceeded`, with a message naming the
//! cap.
//!
//! The counts live in two kinds of Durable Object (`spend_objects.rs`): `SpendShard`, many
//! per deployment (`SPEND_SHARDS`), each counting the owners and client networks whose hash
//! falls in it; and `SpendGuard`, one per UTC day, the day's budget the shards lease blocks of
//! calls from. An anonymous owner's charge is counted against its client's network and its owner
//! at once (two shards, one round trip); a refusal of either gives the other's count back, and
//! its leased calls back to the day's budget. The rules are `core::spend`.

use std::fmt::Write;

use stepwise_core::dates;
use stepwise_core::spend::{Budget, Caps, Charge, Leases, QuotaError, SpendReport, Usage};
use worker::Env;

use super::deadline::now_ms;
use super::error::{AppError, AppResult};
use super::js::{ObjectCall, call_object};
use super::owner::Owner;
use super::settings::number;
use super::turnstile;
use stepwise_core::owner::OwnerKind;

/// The shards' Durable Object binding in wrangler.toml.
pub(super) const SHARD_BINDING: &str = "SPEND_SHARD";
/// The day budgets' Durable Object binding in wrangler.toml.
pub(super) const BUDGET_BINDING: &str = "SPEND_GUARD";
/// Default most model calls of one owner per UTC day.
pub const DEFAULT_PER_OWNER: u64 = 200;
/// Default most model calls of all owners together per UTC day.
pub const DEFAULT_TOTAL: u64 = 5_000;
/// Default most model calls of anonymous owners from one client network per UTC day.
pub const DEFAULT_PER_ADDRESS: u64 = 1_000;
/// Default number of shards. Set it once: changing it moves counters to other shards, so the
/// day's per-owner and per-address counts start again.
pub const DEFAULT_SHARDS: u32 = 64;
/// Most shards (the operator's report asks every one of them in one request).
pub const MAX_SHARDS: u32 = 256;

/// The guard's settings, from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The caps.
    pub caps: Caps,
    /// Shards counters are spread over.
    pub shards: u32,
    /// `SPEND_ESTABLISHED_AFTER_MS`: an owner first seen this long ago counts as established
    /// even on the same UTC day (for tests; unset in production).
    pub established_after_ms: Option<u64>,
}

impl Settings {
    /// `MODEL_CALLS_PER_OWNER_PER_DAY`, `MODEL_CALLS_PER_ADDRESS_PER_DAY`,
    /// `MODEL_CALLS_PER_DAY`, `MODEL_CALLS_NEW_OWNERS_PER_DAY` (default half the total),
    /// `SPEND_SHARDS` and `SPEND_ESTABLISHED_AFTER_MS`.
    pub fn from_env(env: &Env) -> Settings {
        let total = number(env, "MODEL_CALLS_PER_DAY").unwrap_or(DEFAULT_TOTAL);
        Settings {
            caps: Caps {
                per_owner: Some(
                    number(env, "MODEL_CALLS_PER_OWNER_PER_DAY").unwrap_or(DEFAULT_PER_OWNER),
                ),
                per_address: Some(
                    number(env, "MODEL_CALLS_PER_ADDRESS_PER_DAY").unwrap_or(DEFAULT_PER_ADDRESS),
                ),
                total: Some(total),
                new_owners: Some(
                    number(env, "MODEL_CALLS_NEW_OWNERS_PER_DAY").unwrap_or(total / 2),
                ),
            },
            shards: number(env, "SPEND_SHARDS")
                .unwrap_or(DEFAULT_SHARDS)
                .clamp(1, MAX_SHARDS),
            established_after_ms: number(env, "SPEND_ESTABLISHED_AFTER_MS"),
        }
    }

    /// The settings as query parameters, for the objects (which read no environment of
    /// their own, so that a request and its objects always agree).
    pub(super) fn query(&self) -> String {
        let mut query = String::new();
        let caps = [
            ("per_owner", self.caps.per_owner),
            ("per_address", self.caps.per_address),
            ("total", self.caps.total),
            ("new_owners", self.caps.new_owners),
            ("established_after", self.established_after_ms),
        ];
        for (name, value) in caps {
            if let Some(value) = value {
                let _ = write!(query, "&{name}={value}");
            }
        }
        let _ = write!(query, "&shards={}", self.shards);
        query
    }

    /// Settings read back from [`Settings::query`]'s parameters.
    pub(super) fn from_query(param: impl Fn(&str) -> Option<u64>) -> Settings {
        Settings {
            caps: Caps {
                per_owner: param("per_owner"),
                per_address: param("per_address"),
                total: param("total"),
                new_owners: param("new_owners"),
            },
            shards: param("shards")
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(1),
            established_after_ms: param("established_after"),
        }
    }
}

/// What a shard counts a charge under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An owner (their id).
    Owner,
    /// A client network (the hash of its address key).
    Network,
    /// An owner who must have solved a Turnstile check if the shard never counted them.
    NewOwnerChallenged,
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Owner => "owner",
            Kind::Network => "network",
            Kind::NewOwnerChallenged => "owner",
        }
    }
}

/// Counts `charge` for `owner` today, or refuses it (429 `quota_exceeded`). A charge of no
/// calls (offline providers only) is not sent.
pub async fn charge(env: &Env, owner: &Owner, charge: Charge) -> AppResult<()> {
    if charge.calls == 0 {
        return Ok(());
    }
    let settings = Settings::from_env(env);
    let Some(network) = &owner.network else {
        return ask_owner(env, &settings, owner, charge).await.map(|_| ());
    };
    // Both shards at once (one round trip before the model call, not two); a refusal of either
    // gives the other's count back, and its leased calls back to the day's budget.
    let (by_network, by_owner) = futures::future::join(
        ask(env, &settings, Kind::Network, network, charge, Mode::Charge),
        ask_owner(env, &settings, owner, charge),
    )
    .await;
    let undo = |kind, key| async move {
        if let Err(error) = ask(env, &settings, kind, key, charge, Mode::Compensate).await {
            worker::console_warn!("spend: a {} count was not given back: {error}", kind.name());
        }
    };
    match (by_network, by_owner) {
        (Ok(_), Ok(_)) => Ok(()),
        (Err(refused), Ok(_)) => {
            undo(Kind::Owner, &owner.id).await;
            Err(refused)
        }
        (Ok(_), Err(refused)) => {
            undo(Kind::Network, network).await;
            Err(refused)
        }
        // The owner's cap says more to the person than the network's.
        (Err(_), Err(refused)) => Err(refused),
    }
}

/// Charges the owner's shard; for an anonymous owner with no solved Turnstile check while the
/// check is on, the shard refuses an identity it never counted (403 `challenge_required`).
async fn ask_owner(
    env: &Env,
    settings: &Settings,
    owner: &Owner,
    charge: Charge,
) -> AppResult<Usage> {
    let challenge =
        owner.kind == OwnerKind::Anonymous && !owner.verified && turnstile::enabled(env);
    let kind = if challenge {
        Kind::NewOwnerChallenged
    } else {
        Kind::Owner
    };
    ask(env, settings, kind, &owner.id, charge, Mode::Charge).await
}

/// Gives back a charge whose calls were not made.
pub async fn refund(env: &Env, owner: &Owner, charge: Charge) -> AppResult<()> {
    if charge.calls == 0 {
        return Ok(());
    }
    let settings = Settings::from_env(env);
    let by_owner = ask(env, &settings, Kind::Owner, &owner.id, charge, Mode::Refund);
    match &owner.network {
        Some(network) => {
            let by_network = ask(env, &settings, Kind::Network, network, charge, Mode::Refund);
            let (a, b) = futures::future::join(by_owner, by_network).await;
            a.and(b).map(|_| ())
        }
        None => by_owner.await.map(|_| ()),
    }
}

/// The owner's usage today (for `GET /api/me`): read from the owner's shard, nothing written.
pub async fn usage(env: &Env, owner: &Owner) -> AppResult<Usage> {
    let settings = Settings::from_env(env);
    ask(
        env,
        &settings,
        Kind::Owner,
        &owner.id,
        Charge::default(),
        Mode::Charge,
    )
    .await
}

/// The day's spending over every shard, for the operator (`GET /api/spend`).
pub async fn report(env: &Env) -> AppResult<SpendReport> {
    let settings = Settings::from_env(env);
    let day = dates::day(now_ms());
    let read = |binding: &'static str, name: String, url: &'static str| async move {
        let call = ObjectCall {
            method: "GET",
            url,
            headers: &[],
            body: None,
        };
        match call_object(env, binding, &name, call).await? {
            (200, text) => Ok(text),
            (status, text) => Err(AppError::internal(&format_args!(
                "{name} answered {status}: {text}"
            ))),
        }
    };
    let budget = read(
        BUDGET_BINDING,
        day.clone(),
        "https://spend.internal/?read=1",
    );
    let shards = (0..settings.shards).map(|shard| {
        read(
            SHARD_BINDING,
            format!("shard-{shard}"),
            "https://spend.internal/?kind=report",
        )
    });
    let (budget, shards) = futures::future::join(budget, futures::future::join_all(shards)).await;
    let budget = Budget::parse(&budget?).unwrap_or_default();
    let mut leases = Vec::new();
    for (shard, text) in (0..).zip(shards) {
        if let Some(held) = Leases::parse(&text?) {
            leases.push((shard, held));
        }
    }
    Ok(SpendReport::new(
        day,
        settings.caps,
        settings.shards,
        budget,
        leases,
    ))
}

/// The object name of the shard a hex key lives in.
pub(super) fn shard_name(key: &str, shards: u32) -> String {
    format!("shard-{}", stepwise_core::spend::shard_of(key, shards))
}

/// What an ask does with its charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Counts it (a charge of no calls only reads).
    Charge,
    /// Gives it back: its calls were not made.
    Refund,
    /// Gives it back because the other shard refused it; an identity with nothing else counted
    /// is then forgotten (a refused call is remembered of nobody).
    Compensate,
}

/// One charge, refund or read at the key's shard; its answer is the key's usage today.
async fn ask(
    env: &Env,
    settings: &Settings,
    kind: Kind,
    key: &str,
    charge: Charge,
    mode: Mode,
) -> AppResult<Usage> {
    let url = format!(
        "https://spend.internal/?kind={}&challenge={}&key={key}&calls={}&tokens={}&refund={}&forget={}{}",
        kind.name(),
        u8::from(kind == Kind::NewOwnerChallenged),
        charge.calls,
        charge.tokens,
        u8::from(mode != Mode::Charge),
        u8::from(mode == Mode::Compensate),
        settings.query()
    );
    let call = ObjectCall {
        method: "POST",
        url: &url,
        headers: &[],
        body: None,
    };
    let shard = shard_name(key, settings.shards);
    let (status, text) = call_object(env, SHARD_BINDING, &shard, call).await?;
    match status {
        200 => Usage::parse(&text)
            .ok_or_else(|| AppError::internal(&"the spend shard's answer is not counters")),
        429 => Err(AppError::quota_exceeded(&refusal(&text).to_string())),
        403 => Err(turnstile::required(env)),
        status => Err(AppError::internal(&format_args!(
            "spend shard answered {status}: {text}"
        ))),
    }
}

/// A refusal as the objects write it, `"<cap name> <cap>"` (`QuotaError::cap_name`).
pub(super) fn refusal_text(error: &QuotaError, caps: &Caps) -> String {
    let cap = match error {
        QuotaError::Owner { cap }
        | QuotaError::Address { cap }
        | QuotaError::Total { cap }
        | QuotaError::NewOwners { cap } => *cap,
        _ => caps.total.unwrap_or(0),
    };
    format!("{} {cap}", error.cap_name())
}

/// A refusal read back from [`refusal_text`].
pub(super) fn refusal(text: &str) -> QuotaError {
    let (name, cap) = text.trim().split_once(' ').unwrap_or((text, "0"));
    QuotaError::from_cap_name(name, cap.parse().unwrap_or(0))
        .unwrap_or(QuotaError::Total { cap: 0 })
}

/// Default most handoffs to a person of one owner per UTC day.
pub const DEFAULT_HANDOFFS_PER_OWNER: u64 = 5;
/// Default most handoffs to a person from one client network per UTC day.
pub const DEFAULT_HANDOFFS_PER_ADDRESS: u64 = 20;

/// Counts a handoff to a person (a help session put on the operators' list, announced to their
/// webhook) against the owner's and the network's daily caps (`HELP_HANDOFFS_PER_OWNER_PER_DAY`,
/// `HELP_HANDOFFS_PER_ADDRESS_PER_DAY`), or refuses it with 429 `quota_exceeded` and counts
/// nothing. Minted identities do not help: the network's cap binds them together.
pub async fn count_handoff(env: &Env, owner: &Owner) -> AppResult<()> {
    let settings = Settings::from_env(env);
    let per_owner =
        number(env, "HELP_HANDOFFS_PER_OWNER_PER_DAY").unwrap_or(DEFAULT_HANDOFFS_PER_OWNER);
    let per_address =
        number(env, "HELP_HANDOFFS_PER_ADDRESS_PER_DAY").unwrap_or(DEFAULT_HANDOFFS_PER_ADDRESS);
    if let Some(network) = &owner.network
        && !tally(env, &settings, "n", network, per_address, false).await?
    {
        return Err(AppError::quota_exceeded(&format!(
            "your network has asked for a person {per_address} times today, as many as it may; it resets at 00:00 UTC"
        )));
    }
    match tally(env, &settings, "o", &owner.id, per_owner, false).await {
        Ok(true) => Ok(()),
        Ok(false) => {
            uncount_network(env, &settings, owner).await;
            Err(AppError::quota_exceeded(&format!(
                "you have asked for a person {per_owner} times today, as many as you may; it resets at 00:00 UTC"
            )))
        }
        Err(error) => {
            uncount_network(env, &settings, owner).await;
            Err(error)
        }
    }
}

/// Takes back a handoff counted by [`count_handoff`] that did not happen.
pub async fn uncount_handoff(env: &Env, owner: &Owner) {
    let settings = Settings::from_env(env);
    if let Err(error) = tally(env, &settings, "o", &owner.id, 0, true).await {
        worker::console_warn!("spend: a handoff was not taken back: {error}");
    }
    uncount_network(env, &settings, owner).await;
}

async fn uncount_network(env: &Env, settings: &Settings, owner: &Owner) {
    if let Some(network) = &owner.network
        && let Err(error) = tally(env, settings, "n", network, 0, true).await
    {
        worker::console_warn!("spend: a network's handoff was not taken back: {error}");
    }
}

/// One tally (or, with `refund`, its taking back) of `key` (an owner id or a network hash,
/// hex) under `scope` at its shard; whether it was counted.
async fn tally(
    env: &Env,
    settings: &Settings,
    scope: &str,
    key: &str,
    cap: u64,
    refund: bool,
) -> AppResult<bool> {
    let url = format!(
        "https://spend.internal/?kind=tally&key=handoff:{scope}:{key}&cap={cap}&refund={}",
        u8::from(refund)
    );
    let call = ObjectCall {
        method: "POST",
        url: &url,
        headers: &[],
        body: None,
    };
    let shard = shard_name(key, settings.shards);
    match call_object(env, SHARD_BINDING, &shard, call).await? {
        (200, _) => Ok(true),
        (429, _) => Ok(false),
        (status, text) => Err(AppError::internal(&format_args!(
            "spend shard answered {status}: {text}"
        ))),
    }
}

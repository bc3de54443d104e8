//! The spending guard: the vectors (`tests/vectors/spend.json`) replayed through the steps the
//! Worker's objects take, and a property test that no sequence of charges, refunds and days
//! passes a cap, loses a leased call or counts a refused one.

use std::collections::HashMap;

use proptest::prelude::*;
use serde_json::Value;
use stepwise_core::dates;
use stepwise_core::spend::{
    Budget, Caps, Charge, Counter, Leases, QuotaError, Step, charge_address, charge_owner, refund,
    settle_owner, shard_of,
};

/// The guard's objects in memory: shards of counters and leases, and a budget per day; the
/// orchestration is `worker/src/platform/spend.rs` and `spend_objects.rs`, step for step.
struct World {
    caps: Caps,
    shards: u32,
    after: Option<u64>,
    counters: HashMap<(u32, String), Counter>,
    leases: HashMap<u32, Leases>,
    budgets: HashMap<String, Budget>,
}

impl World {
    fn new(caps: Caps, shards: u32, after: Option<u64>) -> World {
        World {
            caps,
            shards,
            after,
            counters: HashMap::new(),
            leases: HashMap::new(),
            budgets: HashMap::new(),
        }
    }

    /// A key's counter as the shard reads it: stored, or new (and not stored yet).
    fn counter(&self, key: &str, now: u64) -> Counter {
        let entry = (shard_of(&key[1..], self.shards), key.to_owned());
        self.counters
            .get(&entry)
            .cloned()
            .unwrap_or_else(|| Counter::new(now))
    }

    fn charge_owner(&mut self, owner: &str, charge: Charge, now: u64) -> Result<(), QuotaError> {
        let (caps, after, shards) = (self.caps, self.after, self.shards);
        let shard = shard_of(owner, shards);
        let mut counter = self.counter(&format!("o{owner}"), now);
        let mut leases = self.leases.entry(shard).or_default().clone();
        let outcome = match charge_owner(&mut counter, &mut leases, charge, &caps, now, after)? {
            Step::Charged => Ok(()),
            Step::NeedLease { pool, calls } => {
                let day = leases.day.clone();
                let budget = self.budgets.entry(day.clone()).or_default();
                let grant = budget.grant(pool, calls, &caps, shards);
                let asked = (pool, day.as_str());
                settle_owner(
                    &mut counter,
                    &mut leases,
                    charge,
                    &caps,
                    now,
                    after,
                    asked,
                    &grant,
                )
            }
        };
        self.put(&format!("o{owner}"), counter, now);
        self.leases.insert(shard, leases);
        outcome
    }

    fn charge_network(
        &mut self,
        network: &str,
        charge: Charge,
        now: u64,
    ) -> Result<(), QuotaError> {
        let caps = self.caps;
        let key = format!("n{network}");
        let mut counter = self.counter(&key, now);
        let outcome = charge_address(&mut counter, charge, &caps, now);
        if outcome.is_ok() {
            self.put(&key, counter, now);
        }
        outcome
    }

    /// A refund at the key's shard; the calls go back to the day's budget. `forget`: a charge
    /// given back because the other shard refused it, after which a blank counter is forgotten.
    fn refund(&mut self, key: &str, charge: Charge, now: u64, forget: bool) {
        let (caps, after) = (self.caps, self.after);
        let shard = shard_of(&key[1..], self.shards);
        let mut counter = self.counter(key, now);
        if key.starts_with('o') {
            let leases = self.leases.entry(shard).or_default();
            if let Some((pool, calls)) =
                refund(&mut counter, Some(leases), charge, &caps, now, after)
            {
                let day = leases.day.clone();
                self.budgets.entry(day).or_default().give_back(pool, calls);
            }
        } else {
            refund(&mut counter, None, charge, &caps, now, after);
        }
        if forget {
            self.put(key, counter, now);
        } else {
            let entry = (shard_of(&key[1..], self.shards), key.to_owned());
            self.counters.insert(entry, counter);
        }
    }

    /// Saves a counter as the shard does after a charge: a blank one is forgotten.
    fn put(&mut self, key: &str, counter: Counter, now: u64) {
        let entry = (shard_of(&key[1..], self.shards), key.to_owned());
        if counter.is_blank(now) {
            self.counters.remove(&entry);
        } else {
            self.counters.insert(entry, counter);
        }
    }

    /// `platform::spend::charge`: the network and the owner at once; a refusal of either gives
    /// the other's count back (the owner's refusal is the one reported when both refuse).
    fn charge(
        &mut self,
        owner: &str,
        network: Option<&str>,
        charge: Charge,
        now: u64,
    ) -> Result<(), QuotaError> {
        let Some(network) = network else {
            return self.charge_owner(owner, charge, now);
        };
        let by_network = self.charge_network(network, charge, now);
        let by_owner = self.charge_owner(owner, charge, now);
        match (by_network, by_owner) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(refused), Ok(())) => {
                self.refund(&format!("o{owner}"), charge, now, true);
                Err(refused)
            }
            (Ok(()), Err(refused)) => {
                self.refund(&format!("n{network}"), charge, now, true);
                Err(refused)
            }
            (Err(_), Err(refused)) => Err(refused),
        }
    }

    fn usage(&self, key: &str, now: u64) -> u64 {
        let entry = (shard_of(&key[1..], self.shards), key.to_owned());
        self.counters
            .get(&entry)
            .map_or(0, |c| c.usage_on(now).calls)
    }
}

fn cap(value: &Value, name: &str) -> Option<u64> {
    value["caps"][name].as_u64()
}

#[test]
fn the_vectors_hold() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/spend.json"
    );
    let vectors: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for case in vectors["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let caps = Caps {
            per_owner: cap(case, "per_owner"),
            per_address: cap(case, "per_address"),
            total: cap(case, "total"),
            new_owners: cap(case, "new_owners"),
        };
        let shards = case["shards"].as_u64().unwrap() as u32;
        let mut world = World::new(caps, shards, case["established_after_ms"].as_u64());
        for (index, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let at = step["at"].as_u64().unwrap();
            let owner = step["owner"].as_str().unwrap();
            let network = step["network"].as_str();
            let charge = Charge {
                calls: step["calls"].as_u64().unwrap(),
                tokens: 10,
            };
            let got = match world.charge(owner, network, charge, at) {
                Ok(()) => "ok",
                Err(error) => {
                    assert_eq!(error.code(), "quota_exceeded");
                    error.cap_name()
                }
            };
            let context = format!("{name}: step {index}");
            assert_eq!(got, step["expect"].as_str().unwrap(), "{context}");
            if let Some(calls) = step["owner_calls"].as_u64() {
                assert_eq!(
                    world.usage(&format!("o{owner}"), at),
                    calls,
                    "{context}: owner"
                );
            }
            if let Some(calls) = step["network_calls"].as_u64() {
                let network = network.unwrap();
                assert_eq!(
                    world.usage(&format!("n{network}"), at),
                    calls,
                    "{context}: network"
                );
            }
            if let Some(granted) = step["budget_granted"].as_u64() {
                let budget = world.budgets[&dates::day(at)];
                assert_eq!(budget.granted, granted, "{context}: budget");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any charges of any owners and networks over two days: no cap is passed, a refused charge
    /// counts nothing, and every call the budget granted is either counted or still held in a
    /// shard (none lost, none made up).
    #[test]
    fn no_sequence_passes_a_cap_or_loses_a_call(
        shards in 1u32..6,
        per_owner in 1u64..8,
        per_address in 1u64..12,
        total in 1u64..40,
        new_share in 0u64..40,
        steps in prop::collection::vec((0u32..12, 0u32..4, 1u64..4, any::<bool>(), 0u64..3), 1..80),
    ) {
        let caps = Caps {
            per_owner: Some(per_owner),
            per_address: Some(per_address),
            total: Some(total),
            new_owners: Some(new_share.min(total)),
        };
        let mut world = World::new(caps, shards, None);
        let mut now = 0;
        let mut counted: HashMap<String, u64> = HashMap::new();
        for (owner, network, calls, anonymous, advance) in steps {
            // Mostly within a day; a step of 2 moves to the next day.
            now += if advance == 2 { 86_400_000 } else { advance };
            let day = dates::day(now);
            let owner = format!("{owner:08x}");
            let network = format!("{:08x}", 0x100 + network);
            let network = anonymous.then_some(network.as_str());
            let before_owner = world.usage(&format!("o{owner}"), now);
            let charge = Charge { calls, tokens: 1 };
            let outcome = world.charge(&owner, network, charge, now);
            let after_owner = world.usage(&format!("o{owner}"), now);
            match outcome {
                Ok(()) => {
                    prop_assert_eq!(after_owner, before_owner + calls);
                    *counted.entry(day.clone()).or_default() += calls;
                }
                Err(_) => prop_assert_eq!(after_owner, before_owner, "a refusal counted"),
            }
            prop_assert!(after_owner <= per_owner);
            if let Some(network) = network {
                let used = world.usage(&format!("n{network}"), now);
                prop_assert!(used <= per_address);
            }
            let budget = world.budgets.get(&day).copied().unwrap_or_default();
            prop_assert!(budget.granted <= total);
            prop_assert!(budget.granted_new <= new_share.min(total));
            let held: u64 = world
                .leases
                .values()
                .filter(|l| l.day == day)
                .map(|l| l.established + l.new)
                .sum();
            let today = counted.get(&day).copied().unwrap_or(0);
            prop_assert_eq!(budget.granted, today + held);
            let by_shards: u64 = world.leases.values().filter(|l| l.day == day).map(|l| l.counted).sum();
            prop_assert_eq!(by_shards, today, "the shards' counts are the calls counted");
        }
    }
}

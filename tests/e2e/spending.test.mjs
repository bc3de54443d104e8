// End-to-end tests of the spending guard under `wrangler dev` (issue 31): a client that mints
// owner tokens cannot spend past its network's cap, nor past the part of the day's budget kept
// for new owners; owners from earlier days keep the rest; the total is exact across the shards;
// a refused call never reaches the provider. The client's address is the `cf-connecting-ip`
// header, which Cloudflare sets on every request (here the test sets it; without it, wrangler
// dev gives every request 127.0.0.1). The optional Turnstile check runs against a stand-in
// for siteverify on loopback.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startSiteverify, turnstileSettings } from "./fake-siteverify.mjs";
import { ADMIN_TOKEN, asOwner, newOwner, ownerId, startStack } from "./harness.mjs";

const PER_OWNER = 2;
const PER_ADDRESS = 3;
const TOTAL = 10;
const NEW_OWNERS = 8;
const ESTABLISHED_AFTER_MS = 6000;

describe("the spending guard against minted identities", () => {
  let stack;
  /** Owners with a counted call in the first test. */
  const counted = [];
  before(async () => {
    stack = await startStack({
      overrides: {
        MODEL_CALLS_PER_OWNER_PER_DAY: String(PER_OWNER),
        MODEL_CALLS_PER_ADDRESS_PER_DAY: String(PER_ADDRESS),
        MODEL_CALLS_PER_DAY: String(TOTAL),
        MODEL_CALLS_NEW_OWNERS_PER_DAY: String(NEW_OWNERS),
        SPEND_SHARDS: "4",
        SPEND_ESTABLISHED_AFTER_MS: String(ESTABLISHED_AFTER_MS),
        // Networks hashed under a key, as a deployment should (the caps below hold the same).
        NETWORK_HASH_KEY: "network-hash-key-for-the-spending-suite-0123",
      },
      config: (wrangler) => {
        for (const limit of wrangler.ratelimits) limit.simple.limit = 1000;
        return wrangler;
      },
    });
    stack.fake.script({ reply: "An answer." });
  });
  after(async () => {
    await stack?.stop();
  });

  /** One paid model call (a guided turn) as `token` from `address`. */
  async function turn(token, address) {
    const headers = { "content-type": "application/json", accept: "application/json", ...asOwner(token) };
    if (address) headers["cf-connecting-ip"] = address;
    const response = await fetch(`${stack.base}/api/chat`, {
      method: "POST",
      headers,
      body: JSON.stringify({ message: "Track rivals", current_config: {} }),
    });
    const json = await response.json();
    return { status: response.status, code: json.error?.code, message: json.error?.message ?? "" };
  }

  /** A new owner token whose id falls in `shard` (the first 8 hex digits of the id modulo 4). */
  function ownerInShard(shard) {
    for (;;) {
      const token = newOwner();
      if (parseInt(ownerId(token).slice(0, 8), 16) % 4 === shard) return token;
    }
  }

  async function usage(token) {
    const response = await fetch(`${stack.base}/api/me`, { headers: asOwner(token) });
    return (await response.json()).usage.calls;
  }

  test("owners from earlier days, identities minted on one network, and the total", async () => {
    // An owner seen before the others: established once ESTABLISHED_AFTER_MS has passed.
    const regular = ownerInShard(3);
    assert.equal((await turn(regular, "198.51.100.20")).status, 200);
    const seenAt = Date.now();

    // One client mints tokens from one address: its network's cap binds, whatever the token.
    const before = stack.fake.requests.length;
    const minted = [];
    const tokens = [0, 1, 2, 3, 0].map(ownerInShard);
    for (const token of tokens) minted.push(await turn(token, "203.0.113.9"));
    counted.push(...tokens.slice(0, PER_ADDRESS));
    assert.deepEqual(minted.slice(0, PER_ADDRESS).map((r) => r.status), [200, 200, 200]);
    for (const refused of minted.slice(PER_ADDRESS)) {
      assert.deepEqual([refused.status, refused.code], [429, "quota_exceeded"]);
      assert.match(refused.message, /network address/);
    }
    assert.equal(stack.fake.requests.length - before, PER_ADDRESS, "refused calls never reached the provider");

    // The assistant's model calls (charged in the conversation's object) count the network too.
    const assistant = await fetch(`${stack.base}/api/assistant`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...asOwner(newOwner()), "cf-connecting-ip": "203.0.113.9" },
      body: JSON.stringify({ message: "What is new in oncology?", context: { current_page: "chat" } }),
    });
    const refusedTurn = await assistant.text();
    assert.match(refusedTurn, /quota_exceeded/, `${assistant.status} ${refusedTurn.slice(0, 300)}`);
    assert.match(refusedTurn, /network address/);
    assert.equal(stack.fake.requests.length - before, PER_ADDRESS, "the assistant's call never reached the provider");

    // Every address of an IPv6 /64 is the same network.
    const [a, b, c] = [ownerInShard(1), ownerInShard(2), ownerInShard(3)];
    assert.equal((await turn(a, "2001:db8:7:8::1")).status, 200);
    assert.equal((await turn(b, "2001:db8:7:8:ffff::2")).status, 200);
    assert.equal((await turn(c, "2001:db8:7:8:1:2:3:4")).status, 200);
    counted.push(a, b, c);
    const sameNetwork = await turn(newOwner(), "2001:0db8:0007:0008:abcd::9");
    assert.deepEqual([sameNetwork.status, sameNetwork.code], [429, "quota_exceeded"]);
    assert.match(sameNetwork.message, /network address/, "a fourth call from the same /64");
    // New owners have used 7 of the day (1 + 3 + 3): one more fits their share, then it is spent,
    // even from a fresh network.
    const last = newOwner();
    assert.equal((await turn(last, "192.0.2.76")).status, 200);
    counted.push(last);
    const fresh = await turn(newOwner(), "192.0.2.77");
    assert.deepEqual([fresh.status, fresh.code], [429, "quota_exceeded"]);
    assert.match(fresh.message, /new visitors/);

    // The owner from before is not locked out: the rest of the total is theirs.
    await new Promise((r) => setTimeout(r, Math.max(0, seenAt + ESTABLISHED_AFTER_MS - Date.now() + 200)));
    assert.equal((await turn(regular, "192.0.2.78")).status, 200);
    assert.equal(await usage(regular), PER_OWNER);
    const capped = await turn(regular, "192.0.2.78");
    assert.deepEqual([capped.status, capped.code], [429, "quota_exceeded"]);
    assert.match(capped.message, /your daily limit of 2/);
  });

  test("the total is exact across the shards; a refused identity is not remembered", async () => {
    // The first test counted 9 calls of 10. An owner refused then (the new owners' share is
    // spent) is still new once the others are established: only a counted call is remembered.
    const refused = newOwner();
    assert.equal((await turn(refused, "198.51.100.50")).status, 429);
    await new Promise((r) => setTimeout(r, ESTABLISHED_AFTER_MS + 200));
    const stillNew = await turn(refused, "198.51.100.51");
    assert.deepEqual([stillNew.status, stillNew.code], [429, "quota_exceeded"]);
    assert.match(stillNew.message, /new visitors/);
    // The seven owners counted earlier (over four shards) are established now: exactly the one
    // call left of the total goes through, the rest are refused by the total.
    const before = stack.fake.requests.length;
    const answers = [];
    for (const [i, owner] of counted.entries()) answers.push(await turn(owner, `198.51.100.${60 + i}`));
    assert.equal(answers.filter((r) => r.status === 200).length, TOTAL - 9, JSON.stringify(answers));
    for (const answer of answers.filter((r) => r.status !== 200)) assert.match(answer.message, /this service's daily limit/);
    assert.equal(stack.fake.requests.length - before, TOTAL - 9);
  });

  test("the operator's report: every granted call counted or held, spread over the shards", async () => {
    const none = await fetch(`${stack.base}/api/spend`);
    assert.equal(none.status, 403);
    const owner = await fetch(`${stack.base}/api/spend`, { headers: asOwner(newOwner()) });
    assert.equal(owner.status, 403, "an owner token is no admin token");
    const response = await fetch(`${stack.base}/api/spend`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(response.status, 200);
    const report = await response.json();
    assert.equal(report.day, new Date().toISOString().slice(0, 10));
    assert.deepEqual(report.caps, { per_owner: PER_OWNER, per_address: PER_ADDRESS, total: TOTAL, new_owners: NEW_OWNERS });
    assert.equal(report.shards, 4);
    assert.equal(report.counted, TOTAL, "the whole total was spent");
    assert.equal(report.granted, report.counted + report.held);
    assert.ok(report.granted <= TOTAL);
    // The counted owners were made to fall in every shard: each counted some of the calls.
    assert.deepEqual(report.by_shard.map((s) => s.shard), [0, 1, 2, 3]);
    for (const shard of report.by_shard) assert.ok(shard.counted > 0, JSON.stringify(report.by_shard));
  });
});

describe("the optional Turnstile check before a new identity's first model call", () => {
  let stack;
  let verifier;
  let verifications;
  before(async () => {
    verifier = await startSiteverify();
    verifications = verifier.verifications;
    stack = await startStack({ overrides: turnstileSettings(verifier) });
    stack.fake.script({ reply: "An answer." });
  });
  after(async () => {
    await stack?.stop();
    verifier?.close();
  });

  async function turn(token, turnstile) {
    const headers = { "content-type": "application/json", accept: "application/json", ...asOwner(token), "cf-connecting-ip": "198.51.100.7" };
    if (turnstile) headers["cf-turnstile-response"] = turnstile;
    const response = await fetch(`${stack.base}/api/chat`, { method: "POST", headers, body: JSON.stringify({ message: "Track rivals", current_config: {} }) });
    const json = await response.json();
    return { status: response.status, code: json.error?.code, message: json.error?.message ?? "" };
  }

  test("a new identity needs a solved check once; a known one never again", async () => {
    const owner = newOwner();
    const before = stack.fake.requests.length;
    const none = await turn(owner);
    assert.deepEqual([none.status, none.code], [403, "challenge_required"]);
    assert.match(none.message, /site key `site-key-1`.*cf-turnstile-response/);
    assert.equal(verifications.length, 0, "no token, nothing to verify");
    const bad = await turn(owner, "bad-token");
    assert.deepEqual([bad.status, bad.code], [403, "challenge_required"]);
    assert.equal(verifications.at(-1)?.response, "bad-token", "the token was put to siteverify");
    assert.equal(stack.fake.requests.length, before, "no refused call reached the provider");

    const good = await turn(owner, "good-token");
    assert.equal(good.status, 200, good.message);
    const last = verifications.at(-1);
    assert.deepEqual([last.secret, last.response, last.remoteip], ["turnstile-secret", "good-token", "198.51.100.7"]);
    // Counted once, the identity is known: no check again.
    assert.equal((await turn(owner)).status, 200);
    assert.equal(stack.fake.requests.length - before, 2);
  });

  test("siteverify failing verifies nobody and fails no request of a known owner", async () => {
    const broken = await turn(newOwner(), "broken");
    assert.deepEqual([broken.status, broken.code], [403, "challenge_required"]);
    const known = newOwner();
    assert.equal((await turn(known, "good-token")).status, 200);
    assert.equal((await turn(known, "broken")).status, 200, "a known owner needs no check");
  });
});

describe("the daily caps on handoffs to a person", () => {
  const PER_OWNER_HANDOFFS = 2;
  const PER_ADDRESS_HANDOFFS = 3;
  let stack;
  before(async () => {
    stack = await startStack({
      overrides: {
        HELP_HANDOFFS_PER_OWNER_PER_DAY: String(PER_OWNER_HANDOFFS),
        HELP_HANDOFFS_PER_ADDRESS_PER_DAY: String(PER_ADDRESS_HANDOFFS),
      },
    });
    stack.fake.script({ reply: "An answer." });
  });
  after(async () => {
    await stack?.stop();
  });

  async function post(path, token, address, body) {
    const headers = { "content-type": "application/json", ...asOwner(token), "cf-connecting-ip": address };
    const response = await fetch(`${stack.base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    const json = await response.json();
    return { status: response.status, json, code: json.error?.code, message: json.error?.message ?? "" };
  }
  /** A new help session of `token` (a question the desk answers), and its id. */
  async function session(token, address) {
    const asked = await post("/api/help", token, address, { message: "How do I share a report?" });
    assert.equal(asked.status, 200, JSON.stringify(asked.json));
    return asked.json.session_id;
  }
  const handoff = (token, address, id) => post(`/api/help/sessions/${id}/handoff`, token, address, {});
  async function status(token, id) {
    const response = await fetch(`${stack.base}/api/help/sessions/${id}`, { headers: asOwner(token) });
    const json = await response.json();
    return { status: json.status, messages: json.messages.length };
  }
  async function listed() {
    const response = await fetch(`${stack.base}/api/help/escalations`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    return JSON.stringify(await response.json());
  }

  test("an owner's and a network's handoffs stop at their caps; a refusal changes nothing", async () => {
    const network = "203.0.113.40";
    const owner = newOwner();
    const ids = [await session(owner, network), await session(owner, network), await session(owner, network)];
    for (const id of ids.slice(0, 2)) assert.equal((await handoff(owner, network, id)).json.status, "escalated");
    const again = await handoff(owner, network, ids[0]);
    assert.equal(again.status, 200, "asking again for a session with a person counts nothing");
    const before = await status(owner, ids[2]);
    const third = await handoff(owner, network, ids[2]);
    assert.deepEqual([third.status, third.code], [429, "quota_exceeded"]);
    assert.match(third.message, /you have asked for a person 2 times today/);
    assert.deepEqual(await status(owner, ids[2]), before, "the refused session is as it was");
    assert.ok(!(await listed()).includes(ids[2]), "and not on the operators' list");

    // A minted identity on the same network: one more fits the network's cap of 3, then no more.
    const second = newOwner();
    assert.equal((await handoff(second, network, await session(second, network))).json.status, "escalated");
    const third_owner = newOwner();
    const refused = await handoff(third_owner, network, await session(third_owner, network));
    assert.deepEqual([refused.status, refused.code], [429, "quota_exceeded"]);
    assert.match(refused.message, /your network has asked for a person 3 times today/);

    // Another network is not affected.
    const elsewhere = newOwner();
    assert.equal((await handoff(elsewhere, "198.51.100.99", await session(elsewhere, "198.51.100.99"))).json.status, "escalated");
  });

  test("a typed request for a person counts too, and past the cap the turn is refused whole", async () => {
    const network = "192.0.2.77";
    const owner = newOwner();
    for (let i = 0; i < PER_OWNER_HANDOFFS; i++) {
      const typed = await post("/api/help", owner, network, { message: "Can I talk to a person?" });
      assert.equal(typed.status, 200, JSON.stringify(typed.json));
      assert.equal(typed.json.status, "escalated");
    }
    const id = await session(owner, network);
    const before = await status(owner, id);
    const refused = await post("/api/help", owner, network, { session_id: id, message: "Can I talk to a person?" });
    assert.deepEqual([refused.status, refused.code], [429, "quota_exceeded"]);
    assert.deepEqual(await status(owner, id), before, "the refused turn left nothing");
    // Questions that need no person still go through.
    const plain = await post("/api/help", owner, network, { session_id: id, message: "How do I delete a stream?" });
    assert.equal(plain.status, 200, JSON.stringify(plain.json));
  });
});

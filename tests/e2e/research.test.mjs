// End-to-end tests of research jobs under `wrangler dev` (local Durable Objects and Queues) with
// the fake provider: every row of tests/vectors/research.json the running system can replay
// (research-lifecycle.md's tables, drafts, publishing), synthesis prompts, the events stream, the
// share page, the webhook, the KV list, duplicate queue deliveries (every call is sent twice
// here), results arriving together, and the alarm failing a hung provider.
import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { ADMIN_TOKEN, SECRET_KEY, apiCaller, asOwner, fakeProvider, newOwner, ownerId, parseSse, startStack } from "./harness.mjs";

const WEBHOOK_SECRET = "whsec-test-5e4d3c2b1a";

const PROVIDERS = ["p1", "p2", "p3", "p4", "p5", "p6"];
const ALARM_MS = 2500;
let stack;
let behaviours = {}; // model -> behaviour of its next answers
let vectorScript = () => null; // a replayed vector's answers, for the requests of its job
const bodies = [];

before(async () => {
  stack = await startStack({
    providers: (url) => [
      ...PROVIDERS.map((name) => fakeProvider(url, name, "openai", name)),
      fakeProvider(url, "synth", "anthropic", "synth"),
      fakeProvider(url, "gem", "gemini", "gem"),
      { name: "offline", kind: "offline" },
      { name: "offline-b", kind: "offline" },
    ],
    overrides: (url) => ({
      NOTIFY_WEBHOOK_URL: `${url}/webhook`,
      WEBHOOK_SECRET,
      LLM_PROVIDER: "synth",
      LLM_TIMEOUT_MS: "20000",
      RESEARCH_TIMEOUT_MS: String(ALARM_MS),
      LLM_CALL_COPIES: "2",
    }),
  });
  stack.fake.webhookAnswers(200);
  stack.fake.script((request) => {
    const scripted = vectorScript(request);
    if (scripted) return scripted;
    if (behaviours[request.model]) return behaviours[request.model];
    if (request.system.startsWith("You name research jobs")) return { reply: "Title: **Fake generated title.**" };
    return { reply: `Report of ${request.model}.` };
  });
});
beforeEach(() => {
  behaviours = {};
  vectorScript = () => null;
});
after(async () => {
  await stack?.stop();
});

/** A request as the suite's owner (another owner's token may be given in `headers`). */
const api = apiCaller(() => stack.base, bodies);
const call = (method, path, body, headers) => api(method, path, { body, headers });

async function draft(fields) {
  const response = await call("POST", "/api/research/draft", { prompt: "How do EGFR inhibitors compare?", synthesis_llm: "synth", ...fields });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

async function start(id) {
  const response = await call("POST", "/api/research", { research_id: id });
  assert.equal(response.status, 200, response.text);
  return response.json;
}

/** Polls the job until `done(job)` holds (at most `ms`). */
async function waitFor(id, done, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const { json } = await call("GET", `/api/research/${id}`);
    if (done(json)) return json;
    if (Date.now() > deadline) throw new Error(`timed out waiting; last state: ${JSON.stringify(json).slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const settled = (job) => ["completed", "failed", "awaiting_confirmation"].includes(job.status);
const result = (job, provider) => job.llm_results.find((r) => r.provider === provider);
const callsTo = (model, since) => stack.fake.requests.filter((r) => r.model === model && r.at >= since && !r.system.startsWith("You name"));

/** Runs a job with these providers and answers until it settles. */
async function run(selected, answers = {}, fields = {}) {
  Object.assign(behaviours, answers);
  const job = await draft({ selected_llms: selected, ...fields });
  await start(job.id);
  return waitFor(job.id, settled);
}

describe("drafts and starting", () => {
  test("a draft is titled by the synthesis model and defaults to every configured provider", async () => {
    const response = await call("POST", "/api/research/draft", { prompt: "How do EGFR inhibitors compare?" });
    assert.equal(response.status, 201, response.text);
    const job = response.json;
    assert.equal(job.status, "draft");
    assert.equal(job.title, "Fake generated title");
    assert.equal(job.synthesis_llm, "synth");
    assert.deepEqual(job.selected_llms, [...PROVIDERS, "synth", "gem", "offline", "offline-b"]);
    const titleCall = stack.fake.requests.findLast((r) => r.system.startsWith("You name research jobs"));
    assert.equal(titleCall.model, "synth");
  });

  test("the title falls back to the prompt when the synthesis model is offline or fails", async () => {
    const offline = await draft({ prompt: "Offline title please\nsecond line", synthesis_llm: "offline" });
    assert.equal(offline.title, "Offline title please");
    behaviours.gem = { status: 500 };
    const failing = await draft({ prompt: "Failing title model", synthesis_llm: "gem" });
    assert.equal(failing.title, "Failing title model");
    delete behaviours.gem;
  });

  test("a draft edited while it starts never runs a call that was not charged (the job's object counts them)", async () => {
    // The edge reads the job, charges its calls, then asks the object to start it; an edit to
    // four providers landing in between used to run calls nobody paid for (issue 31, item 4).
    const outcomes = {};
    for (let attempt = 0; attempt < 16; attempt++) {
      const as = asOwner(newOwner());
      const prompt = `Race ${attempt} ${Math.random().toString(36).slice(2)}`;
      const created = await call("POST", "/api/research/draft", { prompt, selected_llms: ["p1", "p2"], synthesis_llm: "synth" }, as);
      assert.equal(created.status, 201, created.text);
      const { id } = created.json;
      const [started, edited] = await Promise.all([
        call("POST", "/api/research", { research_id: id }, as),
        call("PUT", `/api/research/${id}/draft`, { prompt, selected_llms: ["p1", "p2", "p3", "p4"], synthesis_llm: "synth" }, as),
      ]);
      const outcome = `start ${started.status}${started.json?.error ? ` ${started.json.error.code}` : ""}, edit ${edited.status}`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      assert.ok([200, 409].includes(started.status), started.text);
      if (started.status === 409) assert.ok(["job_changed", "conflict"].includes(started.json.error.code), started.text);
      let job = (await call("GET", `/api/research/${id}`, undefined, as)).json;
      for (let tries = 0; started.status === 200 && !settled(job) && tries < 150; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        job = (await call("GET", `/api/research/${id}`, undefined, as)).json;
      }
      if (started.status === 200) assert.ok(settled(job), `job ${id} did not settle: ${job.status}`);
      else assert.equal(job.status, "draft", "a refused start leaves the draft as it was");
      // Every upstream call of this owner (titles included) was charged, and nothing else was.
      const made = stack.fake.requests.filter((r) => JSON.stringify(r.body).includes(prompt)).length;
      const charged = (await call("GET", "/api/me", undefined, as)).json.usage.calls;
      assert.equal(made, charged, `${outcome}: ${made} calls made, ${charged} charged`);
    }
    console.log(`start and edit raced 16 times: ${JSON.stringify(outcomes)}`);
  });

  test("a draft can be edited until it starts; health lists the providers without secrets", async () => {
    const job = await draft({ selected_llms: ["p1"] });
    const edited = await call("PUT", `/api/research/${job.id}/draft`, { prompt: "Edited question", selected_llms: ["p1", "p2"], synthesis_llm: "synth" });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.json.id, job.id);
    assert.equal(edited.json.created_at, job.created_at);
    assert.equal(edited.json.prompt, "Edited question");
    assert.deepEqual((await call("GET", `/api/research/${job.id}`)).json.selected_llms, ["p1", "p2"]);
    const invalid = await call("PUT", `/api/research/${job.id}/draft`, { prompt: "" });
    assert.equal(invalid.status, 422);
    await start(job.id);
    const late = await call("PUT", `/api/research/${job.id}/draft`, { prompt: "Too late" });
    assert.equal(late.status, 409);
    const health = await call("GET", "/healthz");
    assert.deepEqual(health.json.providers.map((p) => p.name), [...PROVIDERS, "synth", "gem", "offline", "offline-b"]);
    assert.doesNotMatch(health.text, /127\.0\.0\.1|FAKE_KEY/);
  });

  test("bad drafts and starts are refused with a code, and nothing starts", async () => {
    const empty = await call("POST", "/api/research/draft", { prompt: "  " });
    assert.equal(empty.status, 422);
    assert.equal(empty.json.error.code, "invalid_draft");
    const unknownField = await call("POST", "/api/research/draft", { prompt: "x", colour: "red" });
    assert.equal(unknownField.status, 422);
    assert.equal(unknownField.json.error.code, "invalid_request");

    const none = await draft({ selected_llms: [] });
    const noneStart = await call("POST", "/api/research", { research_id: none.id });
    assert.equal(noneStart.status, 422);
    assert.equal(noneStart.json.error.code, "no_providers_selected");
    const unknown = await draft({ selected_llms: ["p1", "nope"] });
    const unknownStart = await call("POST", "/api/research", { research_id: unknown.id });
    assert.equal(unknownStart.status, 422);
    assert.equal(unknownStart.json.error.code, "provider_not_configured");
    assert.match(unknownStart.json.error.message, /nope/);
    assert.equal((await call("GET", `/api/research/${unknown.id}`)).json.status, "draft");

    const missing = await call("POST", "/api/research", { research_id: "0".repeat(32) });
    assert.equal(missing.status, 404);
    const malformed = await call("GET", "/api/research/not-an-id");
    assert.equal(malformed.status, 404);
  });
});

describe("every replayable row of tests/vectors/research.json", () => {
  const file = JSON.parse(readFileSync(new URL("../vectors/research.json", import.meta.url), "utf8"));
  // The vectors' providers a, b, c answer as fake OpenAI models p1..p3; s, the synthesis, as
  // the fake Anthropic model `synth`. Other names (an unconfigured one) stay as they are.
  const NAMES = { a: "p1", b: "p2", c: "p3", s: "synth" };
  const named = (provider) => NAMES[provider] ?? provider;
  const FAULTS = { upstream_error: { status: 500 }, rate_limited: { status: 429 }, auth: { status: 401 }, bad_stream: { fault: "malformed" } };
  const STATUS = { conflict: 409, not_found: 404, no_providers_selected: 422, provider_not_configured: 422, invalid_draft: 422, invalid_record: 422 };
  const OTHER = newOwner();
  const settledOrDraft = (job) => settled(job) || job.status === "draft";

  /** The fake provider's answers for one case: each provider's (and the synthesis's) outcome
   * per attempt, from the case's `finish` and `synthesis` steps; success by default. */
  function script(steps) {
    const outcomes = {};
    for (const step of steps) {
      if (step.op !== "finish" && step.op !== "synthesis") continue;
      const model = step.op === "synthesis" ? "synth" : named(step.provider);
      (outcomes[model] ??= {})[step.attempt ?? 1] = step.fail ? FAULTS[step.fail] : null;
    }
    return outcomes;
  }

  /** The job a case starts from: a started draft, a draft with the state's fields, or the
   * state imported (as an admin restores a record) under a fresh job id. */
  async function begin(testCase, prompt) {
    if (testCase.start) {
      const external_reports = Array.from({ length: testCase.start.external_reports }, (_, i) => ({ title: `X${i}`, content: "ctx" }));
      const job = await draft({ prompt, selected_llms: testCase.start.selected_llms.map(named), external_reports });
      await start(job.id);
      return job.id;
    }
    const state = testCase.state;
    const job = await draft({ prompt, selected_llms: state.selected_llms.map(named), synthesis_llm: named(state.synthesis_llm) });
    if (state.status === "draft") return job.id;
    // The vectors' times count from 0; a record of 1970 would be past its retention at once.
    const now = Date.now();
    const at = (t) => (t === undefined ? undefined : t + now);
    const record = {
      ...state,
      id: job.id,
      owner: ownerId(),
      created_at: at(state.created_at),
      started_at: at(state.started_at),
      finished_at: at(state.finished_at),
      prompt,
      selected_llms: state.selected_llms.map(named),
      synthesis_llm: named(state.synthesis_llm),
      llm_results: state.llm_results.map((r) => ({ ...r, dispatched_at: at(r.dispatched_at), provider: named(r.provider), result: r.status === "completed" ? `Report of ${named(r.provider)}.` : r.result })),
    };
    const imported = await call("PUT", `/api/research/${job.id}`, record, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(imported.status, 200, imported.text);
    return job.id;
  }

  /** A user's step over HTTP, as the step's caller (the owner, or `other`); internal steps
   * (results, claims, alarms) and steps with no route (titles come from the model) are the
   * running system's own and are not sent. */
  function request(id, step) {
    const as = step.caller === "other" ? asOwner(OTHER) : {};
    switch (step.op) {
      case "confirm": return call("POST", `/api/research/${id}/confirm`, { action: step.action }, as);
      case "retry": return call("POST", `/api/research/${id}/retry`, undefined, as);
      case "start": return call("POST", "/api/research", { research_id: id }, as);
      case "edit": return call("PUT", `/api/research/${id}/draft`, { prompt: step.prompt ?? "P", selected_llms: (step.selected_llms ?? ["a"]).map(named), synthesis_llm: "synth" }, as);
      case "share": return call("POST", `/api/research/${id}/share`, undefined, as);
      case "unshare": return call("DELETE", `/api/research/${id}/share`, undefined, as);
      case "delete": return call("DELETE", `/api/research/${id}`, undefined, as);
      default: return null;
    }
  }

  for (const testCase of file.cases) {
    const skip = testCase.e2e.startsWith("skip") ? testCase.e2e : false;
    test(testCase.name, { skip }, async () => {
      const prompt = `Vector ${testCase.name} ${Date.now()}`;
      const outcomes = script(testCase.steps);
      const calls = {};
      vectorScript = (req) => {
        if (!JSON.stringify(req.body).includes(prompt) || req.system.startsWith("You name research jobs")) return null;
        calls[req.model] = (calls[req.model] ?? 0) + 1;
        return outcomes[req.model]?.[calls[req.model]] ?? { reply: `Report of ${req.model}.` };
      };
      const id = await begin(testCase, prompt);
      let gone = false;
      for (const step of testCase.steps) {
        if (!gone) await waitFor(id, settledOrDraft);
        if (step.op === "delete" && !step.caller) gone = true;
        const response = await request(id, step);
        if (!response) continue;
        if (step.expect_error) {
          assert.equal(response.status, STATUS[step.expect_error], `${step.op}: ${response.text}`);
          assert.equal(response.json.error.code, step.expect_error);
        } else {
          assert.ok(response.status < 300, `${step.op}: ${response.text}`);
        }
      }
      if (testCase.e2e === "deleted") {
        assert.equal((await call("GET", `/api/research/${id}`)).status, 404);
        return;
      }
      const job = await waitFor(id, settledOrDraft);
      assert.equal(job.status, testCase.e2e, JSON.stringify(job).slice(0, 600));
      const expect = testCase.expect;
      if (expect.status !== testCase.e2e) return; // the vector stops mid-way; the system went on
      if ("error" in expect) assert.equal(job.error ?? null, expect.error);
      for (const [provider, status] of Object.entries(expect.llm ?? {})) assert.equal(result(job, named(provider)).status, status, provider);
      for (const [provider, code] of Object.entries(expect.llm_errors ?? {})) assert.equal(result(job, named(provider)).error.code, code, provider);
      if (expect.partial_failure) assert.deepEqual(job.partial_failure.failed_providers, expect.partial_failure.map(named));
      for (const key of ["retry_count", "synthesis_not_available"]) if (key in expect) assert.equal(job[key], expect[key], key);
      if (expect.prompt) assert.equal(job.prompt, expect.prompt);
      if ("share_id" in expect) assert.equal(Boolean(job.share_info), expect.share_id !== null, "shared");
      if (expect.selected_llms) assert.deepEqual(job.selected_llms, expect.selected_llms.map(named));
    });
  }
});

describe("synthesis prompts and state checks", () => {
  test("the synthesis names every source, and an external report is labelled", async () => {
    const since = Date.now();
    const job = await run(["p1", "p2", "p3"], {}, { external_reports: [{ title: "Lab notes", content: "Our own findings." }] });
    assert.equal(job.status, "completed", JSON.stringify(job));
    assert.equal(job.synthesized_result, "Report of synth.");
    assert.equal(job.synthesis_not_available, false);
    for (const p of ["p1", "p2", "p3"]) assert.equal(result(job, p).result, `Report of ${p}.`);
    const synthesis = callsTo("synth", since);
    assert.equal(synthesis.length, 1);
    const prompt = synthesis[0].body.messages.at(-1).content;
    for (const p of ["p1", "p2", "p3"]) assert.match(prompt, new RegExp(`Source \\d: ${p} \\(model report\\) ===\\nReport of ${p}`));
    assert.match(prompt, /Source 4: external report "Lab notes" ===\nOur own findings\./);
    assert.ok(job.started_at >= job.created_at && job.finished_at >= job.started_at);
  });

  test("one report and no external report: completed with \"synthesis not available\"", async () => {
    const since = Date.now();
    const job = await run(["p1"]);
    assert.equal(job.status, "completed");
    assert.equal(job.synthesized_result, undefined);
    assert.equal(job.synthesis_not_available, true);
    assert.equal(callsTo("synth", since).length, 0);
  });

  test("confirm outside awaiting_confirmation → 409, and a bad action → 422", async () => {
    const job = await run(["p1"]);
    const response = await call("POST", `/api/research/${job.id}/confirm`, { action: "proceed" });
    assert.equal(response.status, 409);
    assert.equal(response.json.error.code, "conflict");
    const bad = await call("POST", `/api/research/${job.id}/confirm`, { action: "later" });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.error.code, "invalid_request");
  });

  test("retry in any other status → 409 conflict", async () => {
    const draftJob = await draft({ selected_llms: ["p1"] });
    const response = await call("POST", `/api/research/${draftJob.id}/retry`);
    assert.equal(response.status, 409);
    assert.equal(response.json.error.code, "conflict");
    const completed = await run(["p1"]);
    assert.equal((await call("POST", `/api/research/${completed.id}/retry`)).status, 409);
    assert.equal((await call("POST", "/api/research", { research_id: completed.id })).status, 409);
  });

  test("importing a record needs the admin token and a matching id", async () => {
    const job = await draft({ selected_llms: ["p1"] });
    assert.equal((await call("PUT", `/api/research/${job.id}`, job)).status, 403);
    const other = { ...job, id: "f".repeat(32) };
    const mismatch = await call("PUT", `/api/research/${job.id}`, other, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(mismatch.status, 422);
  });
});

describe("delivery, concurrency and timeouts", () => {
  test("every call was queued twice, yet each provider was called once per attempt", async () => {
    const since = Date.now();
    const job = await run(["p1", "p2"]);
    assert.equal(job.status, "completed");
    assert.equal(callsTo("p1", since).length, 1);
    assert.equal(callsTo("p2", since).length, 1);
    assert.equal(callsTo("synth", since).length, 1);
    assert.equal(job.llm_results.length, 2);
    assert.match(stack.log(), /already claimed; delivery dropped/);
  });

  test("six results arriving at once lose nothing", async () => {
    const answers = Object.fromEntries(PROVIDERS.map((p) => [p, { reply: `Report of ${p}.`, latencyMs: 300 }]));
    const job = await run(PROVIDERS, answers);
    assert.equal(job.status, "completed", JSON.stringify(job));
    assert.deepEqual(job.llm_results.map((r) => [r.provider, r.status, r.result]), PROVIDERS.map((p) => [p, "completed", `Report of ${p}.`]));
    for (const p of PROVIDERS) delete behaviours[p];
  });

  // Last of its group: wrangler dev runs one consumer batch at a time, so the hung call delays
  // later calls until the fake provider drops it (`hangMs`).
  test("a hung provider is failed by the alarm with code timeout", async () => {
    const started = Date.now();
    const hangMs = ALARM_MS + 1000;
    const job = await run(["p1", "p4"], { p4: { fault: "hang_before_headers", hangMs } });
    assert.equal(job.status, "awaiting_confirmation");
    const hung = result(job, "p4");
    assert.equal(hung.status, "failed");
    assert.equal(hung.error.code, "timeout");
    assert.match(hung.error.message, /no answer within/);
    assert.ok(Date.now() - started >= ALARM_MS, "failed before the timeout");
    // The dropped connection's late failure is for a call no longer open: nothing changes.
    await new Promise((r) => setTimeout(r, Math.max(0, started + hangMs + 500 - Date.now())));
    assert.deepEqual(await waitFor(job.id, settled), job);
  });
});

describe("events, share page, webhook, list", () => {
  test("the events stream shows every status and provider change, then ends", async () => {
    Object.assign(behaviours, { p1: { reply: "Report of p1.", latencyMs: 200 }, p2: { reply: "Report of p2.", latencyMs: 400 } });
    const job = await draft({ selected_llms: ["p1", "p2"] });
    const stream = await fetch(`${stack.base}/api/research/${job.id}/events`, { headers: asOwner(), signal: AbortSignal.timeout(15000) });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get("content-type"), /^text\/event-stream/);
    const text = stream.text();
    await start(job.id);
    const events = parseSse(await text);
    assert.deepEqual(events.map((e) => e.id), events.map((_, i) => i));
    assert.equal(events[0].event, "snapshot");
    assert.equal(events[0].data.status, "draft");
    const changes = events.slice(1).map((e) => (e.event === "status_changed" ? e.data.status : e.event === "provider_changed" ? `${e.data.provider}:${e.data.status}` : e.event));
    assert.deepEqual(changes, ["processing", "p1:pending", "p2:pending", "p1:processing", "p2:processing", "p1:completed", "p2:completed", "synthesizing", "completed", "end"]);
    delete behaviours.p1;
    delete behaviours.p2;
    // A finished job's stream is its snapshot alone.
    const again = parseSse(await (await fetch(`${stack.base}/api/research/${job.id}/events`, { headers: asOwner() })).text());
    assert.deepEqual(again.map((e) => [e.event, e.data.status]), [["snapshot", "completed"], ["end", undefined]]);
  });

  test("its owner publishes a completed job as an escaped read-only page; the signed webhook gets its URL", async () => {
    const job = await run(["p1", "p2"], { p2: { reply: "<script>alert(1)</script> & more" } });
    delete behaviours.p2;
    assert.equal(job.status, "completed");
    assert.equal(job.share_info, undefined, "nothing is published until the owner chooses to");
    const shared = await call("POST", `/api/research/${job.id}/share`);
    assert.equal(shared.status, 200, shared.text);
    const { share_id, url, expires_at, published_at } = shared.json.share_info;
    assert.ok(expires_at - published_at >= 89 * 24 * 3600 * 1000, "shared for 90 days by default");
    assert.equal(url, `${stack.base}/share/${share_id}`);
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type"), /^text\/html/);
    assert.match(page.headers.get("content-security-policy"), /default-src 'none'/);
    assert.match(page.headers.get("content-security-policy"), /frame-ancestors 'none'; base-uri 'none'; form-action 'none'/);
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    assert.equal(page.headers.get("referrer-policy"), "no-referrer");
    const html = await page.text();
    assert.match(html, /Fake generated title/);
    assert.match(html, /Report of synth\./);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; more/);
    assert.doesNotMatch(html, /<script>/);
    const deadline = Date.now() + 10000;
    while (!stack.fake.webhooks.some((w) => w.body.event.share_id === share_id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const hook = stack.fake.webhooks.find((w) => w.body.event.share_id === share_id);
    assert.ok(hook, "the webhook was not called");
    assert.equal(hook.body.type, "research.published");
    assert.equal(hook.body.event.url, url);
    assert.equal(hook.body.event.research_id, job.id);
    // The receiver checks the signature over the raw body, and keys repeats by the share id.
    const expected = createHmac("sha256", WEBHOOK_SECRET).update(hook.raw).digest("hex");
    assert.equal(hook.headers["x-stepwise-signature"], `sha256=${expected}`);
    assert.equal(hook.headers["idempotency-key"], share_id);
    assert.equal((await fetch(`${stack.base}/share/${"0".repeat(32)}`)).status, 404);
    // Sharing again keeps the link; withdrawing removes the page at once.
    assert.equal((await call("POST", `/api/research/${job.id}/share`)).json.share_info.share_id, share_id);
    const withdrawn = await call("DELETE", `/api/research/${job.id}/share`);
    assert.equal(withdrawn.status, 200);
    assert.equal(withdrawn.json.share_info, undefined);
    assert.equal((await fetch(url)).status, 404);
  });

  test("a link that is not shared answers one small HTML page, 404, whether withdrawn, never shared or malformed", async () => {
    const job = await run(["p1", "p2"]);
    assert.equal(job.status, "completed");
    const { url } = (await call("POST", `/api/research/${job.id}/share`)).json.share_info;
    assert.equal((await fetch(url)).status, 200);
    assert.equal((await call("DELETE", `/api/research/${job.id}/share`)).status, 200);
    const pages = [];
    for (const path of [new URL(url).pathname, `/share/${"0".repeat(32)}`, "/share/not-an-id"]) {
      for (const accept of ["text/html,application/xhtml+xml,*/*;q=0.8", "*/*"]) {
        const page = await fetch(stack.base + path, { headers: { accept } });
        assert.equal(page.status, 404, path);
        assert.match(page.headers.get("content-type"), /^text\/html; charset=utf-8/, path);
        assert.equal(page.headers.get("cache-control"), "no-store", `${path}: a link shared again must not stay hidden`);
        assert.match(page.headers.get("content-security-policy"), /default-src 'none'.*frame-ancestors 'none'/);
        assert.equal(page.headers.get("x-content-type-options"), "nosniff");
        pages.push(await page.text());
      }
    }
    assert.equal(new Set(pages).size, 1, "nothing tells a withdrawn link from one never shared");
    assert.match(pages[0], /^<!doctype html>/);
    assert.match(pages[0], /<h1>This report is no longer shared<\/h1>/);
    assert.equal(pages[0].replace(/<style>[^]*<\/style>/, "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim(), "Report not shared This report is no longer shared");
    assert.doesNotMatch(pages[0], /not_found|"error"|Fake generated title|Report of p1|<script|<form/i);
    // Shared again, the report is back at once, and the published page is not cached for long.
    const again = (await call("POST", `/api/research/${job.id}/share`)).json.share_info;
    const back = await fetch(again.url);
    assert.equal(back.status, 200);
    assert.match(await back.text(), /Report of p1\./);
    assert.match(back.headers.get("cache-control"), /no-cache/);
  });

  test("the list shows jobs newest first with their status", async () => {
    const older = await draft({ prompt: "Older job" });
    await new Promise((r) => setTimeout(r, 5));
    const newer = await draft({ prompt: "Newer job" });
    const { status, json } = await call("GET", "/api/research?limit=100");
    assert.equal(status, 200);
    const ids = json.items.map((i) => i.id);
    assert.ok(ids.indexOf(newer.id) < ids.indexOf(older.id) && ids.indexOf(newer.id) >= 0);
    const item = json.items.find((i) => i.id === newer.id);
    assert.equal(item.status, "draft");
    assert.equal(item.title, "Fake generated title");
    for (let i = 1; i < json.items.length; i++) assert.ok(json.items[i - 1].created_at >= json.items[i].created_at);
    const page = await call("GET", "/api/research?limit=2");
    assert.equal(page.json.items.length, 2);
    assert.ok(page.json.cursor);
    assert.equal((await call("GET", "/api/research?limit=0")).status, 422);
  });

  test("offline providers fan out with no keys", async () => {
    const job = await run(["offline", "offline-b"], {}, { synthesis_llm: "offline" });
    assert.equal(job.status, "completed");
    assert.equal(job.llm_results.length, 2);
    assert.ok(job.llm_results.every((r) => r.result.length > 50));
    assert.match(job.synthesized_result, /offline/);
    assert.match(job.synthesized_result, /offline-b/);
  });
});

test("the key never appears in a research response", () => {
  for (const body of bodies) assert.ok(!body.includes(SECRET_KEY));
  assert.ok(!stack.log().includes(SECRET_KEY));
});

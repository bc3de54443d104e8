// End-to-end tests of the Worker under `wrangler dev` with the fake provider: the shared vectors
// over HTTP in JSON and SSE modes for all three wire formats, every event type, update-field,
// refresh recovery, error codes, upstream faults, CORS, and that keys never leak.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ADMIN_TOKEN, SECRET_KEY, TIMEOUT_MS, apiCaller, parseSse, startStack } from "./harness.mjs";

const vectors = JSON.parse(readFileSync(new URL("../vectors/guided_workflow.json", import.meta.url), "utf8"));
const DEFAULTS = { message: "", suggestions: [], options: [], skipped: [], updated_config: {} };
const MARKER_LINE = /^\s*(?:[-*+•]\s+|\d+[.)]\s+)?(?:\*\*|__)?(SUGGESTIONS|OPTIONS|EXTRACTED_DATA|PROPOSED_MESSAGE|TARGET_FIELD)(?:\*\*|__)?:/m;
let stack;
const bodies = []; // every response body, checked for the key at the end

before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

/** A request as the suite's owner (`Authorization` may be overridden in `headers`). */
const call = apiCaller(() => stack.base, bodies);

const chatJson = (body, headers) => call("POST", "/api/chat", { body, headers: { accept: "application/json", ...headers } });
const chatSse = async (body, headers) => {
  const response = await call("POST", "/api/chat", { body, headers: { accept: "text/event-stream", ...headers } });
  return { ...response, events: response.status === 200 ? parseSse(response.text) : [] };
};
const withoutIds = ({ conversation_id, conversation_token, turns, ...rest }) => rest;

describe("the shared guided-workflow vectors over HTTP", () => {
  for (const vector of vectors.cases) {
    test(`JSON mode: ${vector.name}`, async () => {
      stack.fake.script({ reply: vector.model_reply ?? "" });
      const response = await chatJson(vector.request);
      const expected = { ...DEFAULTS, ...vector.expect.response };
      if (expected.error) {
        assert.equal(response.status, 422, response.text);
        assert.deepEqual(JSON.parse(response.text), { error: expected.error });
      } else {
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(withoutIds(JSON.parse(response.text)), expected);
      }
    });
  }
  for (const kind of ["openai", "anthropic", "gemini"]) {
    test(`SSE mode with the ${kind} wire format split at awkward points`, async () => {
      for (const vector of vectors.cases.filter((v) => v.model_reply !== null)) {
        stack.fake.script({ reply: vector.model_reply });
        const { status, events, text } = await chatSse({ ...vector.request, provider: `fake-${kind}` });
        assert.equal(status, 200, text);
        const types = events.map((e) => e.event);
        assert.equal(types[0], "status", vector.name);
        assert.equal(types.at(-1), "complete", vector.name);
        // The turn's log numbers its events (`lease × 10⁶ + n`); a stream shows those of its
        // dialect, in order (marker-only deltas are numbered for `model_delta` clients).
        const ids = events.map((e) => e.id);
        assert.ok(ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > ids[i - 1])), `${vector.name}: ids ${ids}`);
        for (const event of events) assert.equal(event.data.type, event.event);
        const shown = events.filter((e) => e.event === "text_delta").map((e) => e.data.text).join("");
        assert.doesNotMatch(shown, MARKER_LINE, `${vector.name}: marker syntax in text_delta`);
        assert.deepEqual(withoutIds(events.at(-1).data.payload), { ...DEFAULTS, ...vector.expect.response }, vector.name);
      }
    });
  }
});

describe("model deltas for clients that parse markers themselves", () => {
  test("x-stepwise-deltas: model streams the model's own text and the same complete event", async () => {
    for (const vector of vectors.cases.filter((v) => v.model_reply)) {
      stack.fake.script({ reply: vector.model_reply });
      const { status, events, text } = await chatSse(vector.request, { "x-stepwise-deltas": "model" });
      assert.equal(status, 200, text);
      assert.equal(events.filter((e) => e.event === "text_delta").length, 0, vector.name);
      const model = events.filter((e) => e.event === "model_delta").map((e) => e.data.text).join("");
      assert.equal(model, vector.model_reply, vector.name);
      assert.deepEqual(withoutIds(events.at(-1).data.payload), { ...DEFAULTS, ...vector.expect.response }, vector.name);
    }
  });
});

describe("conversations", () => {
  test("a conversation resumes after a refresh, with its token only", async () => {
    stack.fake.script({ reply: "Saved.\nEXTRACTED_DATA: purpose=Track rivals\n" });
    const first = JSON.parse((await chatJson({ message: "Track rivals", current_config: {}, conversation_history: [] })).text);
    assert.match(first.conversation_id, /^[0-9a-f]{32}$/);
    assert.match(first.conversation_token, /^[0-9a-f]{32}$/);
    const token = { "x-conversation-token": first.conversation_token };
    stack.fake.script({ reply: "Goals noted.\nEXTRACTED_DATA: business_goals=Launches, Pricing\n" });
    const second = JSON.parse(
      (await chatJson({ conversation_id: first.conversation_id, turns: first.turns, message: "Launches, pricing", current_step: first.next_step, current_config: first.updated_config, conversation_history: [] }, token)).text,
    );
    assert.equal(second.next_step, "stream_type");
    assert.equal(second.conversation_token, undefined, "the token is sent on the first turn only");
    const snapshot = await call("GET", `/api/conversations/${first.conversation_id}`, { headers: token });
    assert.equal(snapshot.status, 200);
    const saved = JSON.parse(snapshot.text);
    assert.equal(saved.current_step, "stream_type");
    assert.deepEqual(saved.current_config, { purpose: "Track rivals", business_goals: ["Launches", "Pricing"] });
    // Both exchanges: the stored history grows on the server, whatever history a turn carries.
    assert.equal(saved.conversation_history.length, 4);
    assert.equal((await call("GET", `/api/conversations/${first.conversation_id}`)).status, 403);
    assert.equal((await call("GET", `/api/conversations/${first.conversation_id}`, { headers: { "x-conversation-token": "0".repeat(32) } })).status, 403);
    assert.equal(first.turns, 1);
    assert.equal(second.turns, 2);
    const wrongTurn = await chatJson({ conversation_id: first.conversation_id, turns: 2, message: "x", current_config: {} }, { "x-conversation-token": "1".repeat(32) });
    assert.equal(wrongTurn.status, 403);
  });

  test("a failed turn persists nothing", async () => {
    stack.fake.script({ reply: "Saved.\nEXTRACTED_DATA: purpose=Kept\n" });
    const first = JSON.parse((await chatJson({ message: "Kept", current_config: {}, conversation_history: [] })).text);
    const token = { "x-conversation-token": first.conversation_token };
    stack.fake.script({ reply: "Partial\nEXTRACTED_DATA: business_goals=Lost\n", fault: "cut" });
    const failed = await chatSse({ conversation_id: first.conversation_id, turns: 1, message: "Lost", current_step: "business_goals", current_config: first.updated_config }, token);
    assert.equal(failed.events.at(-1).event, "error");
    const saved = JSON.parse((await call("GET", `/api/conversations/${first.conversation_id}`, { headers: token })).text);
    assert.deepEqual(saved.current_config, { purpose: "Kept" });
    assert.equal(saved.turns, 1);
  });
});

describe("update-field, workflows and health", () => {
  test("update-field validates and applies one field without a model call", async () => {
    const before = stack.fake.requests.length;
    const ok = await call("PUT", "/api/chat/update-field", { body: { current_config: { purpose: "A" }, field_name: "stream_type", value: "Clinical" } });
    assert.equal(ok.status, 200);
    assert.deepEqual(JSON.parse(ok.text), { updated_config: { purpose: "A", stream_type: "clinical" } });
    const bad = await call("PUT", "/api/chat/update-field", { body: { current_config: {}, field_name: "stream_type", value: "banana" } });
    assert.equal(bad.status, 422);
    assert.equal(JSON.parse(bad.text).error.code, "invalid_value");
    assert.equal(stack.fake.requests.length, before);
  });

  test("workflow specs are served, and overridden only with the admin token", async () => {
    const builtin = JSON.parse((await call("GET", "/api/workflows/research_stream")).text);
    assert.equal(builtin.steps.length, 7);
    const spec = { id: "demo", title: "Demo", steps: [{ id: "name", field: "name", kind: "text", required: true }, { id: "review", kind: "confirm" }] };
    assert.equal((await call("PUT", "/api/workflows/demo", { body: spec })).status, 403);
    const invalid = await call("PUT", "/api/workflows/demo", { body: { ...spec, steps: [] }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(JSON.parse(invalid.text).error.code, "invalid_spec");
    assert.equal((await call("PUT", "/api/workflows/demo", { body: spec, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 200);
    const stored = { ...spec, steps: [spec.steps[0], { ...spec.steps[1], required: false }] }; // normalized: `required` explicit
    assert.deepEqual(JSON.parse((await call("GET", "/api/workflows/demo")).text), stored);
    stack.fake.script({ reply: "Hi Ada.\nEXTRACTED_DATA: name=Ada\n" });
    const turn = JSON.parse((await chatJson({ workflow: "demo", message: "Ada", current_config: {} })).text);
    assert.equal(turn.next_step, "review");
    assert.equal((await call("GET", "/api/workflows/unknown")).status, 404);
  });

  test("health names the chat provider and never its key", async () => {
    const health = JSON.parse((await call("GET", "/healthz")).text);
    const providers = ["openai", "anthropic", "gemini"].map((kind) => ({ name: `fake-${kind}`, kind }));
    providers.push({ name: "offline", kind: "offline" });
    assert.deepEqual(health, { status: "ok", provider: { name: "fake-openai", kind: "openai" }, providers });
  });
});

describe("bad input", () => {
  const codeOf = (response) => JSON.parse(response.text).error.code;
  test("oversized, malformed and misshapen bodies get 413, 400 and 422 saying what and where", async () => {
    const big = await call("POST", "/api/chat", { raw: JSON.stringify({ message: "x".repeat(300_000) }) });
    assert.equal(big.status, 413);
    const malformed = await call("POST", "/api/chat", { raw: "{not json" });
    assert.deepEqual([malformed.status, codeOf(malformed)], [400, "invalid_json"]);
    const shape = await chatJson({ message: "x", current_config: { purpose: 5 } });
    assert.deepEqual([shape.status, codeOf(shape)], [422, "invalid_request"]);
    assert.match(JSON.parse(shape.text).error.message, /integer .*line 1 column \d+/);
    const action = await chatJson({ message: "x", current_step: "purpose", current_config: {}, user_action: { type: "teleport" } });
    assert.deepEqual([action.status, codeOf(action)], [422, "invalid_request"]);
    assert.match(JSON.parse(action.text).error.message, /teleport.*line 1 column \d+/);
    const extra = await chatJson({ message: "x", current_config: {}, colour: "red" });
    assert.match(JSON.parse(extra.text).error.message, /unknown field `colour`/);
    const provider = await chatJson({ message: "x", current_config: {}, provider: "nope" });
    assert.deepEqual([provider.status, codeOf(provider)], [422, "unknown_provider"]);
    assert.equal((await call("DELETE", "/api/chat")).status, 405);
    assert.equal((await call("GET", "/nowhere")).status, 404);
  });
});

describe("upstream faults", () => {
  const request = { message: "Track rivals", current_step: "purpose", current_config: {}, conversation_history: [] };
  for (const [fault, script, code, status] of [
    ["429", { status: 429 }, "rate_limited", 429],
    ["500", { status: 500 }, "upstream_error", 502],
    ["401", { status: 401 }, "auth", 502],
    ["a hang past the timeout", { fault: "hang", reply: "Half an answer\nSUGGESTIONS: a, b\n" }, "timeout", 504],
    ["no answer at all", { fault: "hang_before_headers" }, "timeout", 504],
    ["a connection cut mid-stream", { fault: "cut", reply: "Half an answer that is long enough\n" }, "bad_stream", 502],
    ["malformed SSE", { fault: "malformed" }, "bad_stream", 502],
  ]) {
    test(`${fault} ends the stream with an error event (${code})`, async () => {
      for (const kind of ["openai", "anthropic", "gemini"]) {
        stack.fake.script(script);
        const { events } = await chatSse({ ...request, provider: `fake-${kind}` });
        const last = events.at(-1);
        assert.equal(last.event, "error", `${kind}: ${JSON.stringify(events)}`);
        assert.equal(last.data.code, code, kind);
        assert.ok(!events.some((e) => e.event === "complete"), kind);
      }
      stack.fake.script(script);
      const json = await chatJson(request);
      assert.deepEqual([json.status, JSON.parse(json.text).error.code], [status, code]);
    });
  }

  test("a connection dropped at once, before any answer, is sent once more, and only once", async () => {
    let calls = 0;
    stack.fake.script(() => (++calls === 1 ? { fault: "reset" } : { reply: "Answered on a new connection.\n" }));
    let before = stack.fake.requests.length;
    const { events, text } = await chatSse({ ...request, provider: "fake-openai" });
    assert.equal(events.at(-1)?.event, "complete", text);
    assert.equal(events.at(-1).data.payload.message, "Answered on a new connection.");
    assert.equal(stack.fake.requests.length - before, 2);
    stack.fake.script({ fault: "reset" });
    before = stack.fake.requests.length;
    const json = await chatJson({ ...request, provider: "fake-openai" });
    assert.deepEqual([json.status, JSON.parse(json.text).error.code], [502, "upstream_error"]);
    assert.equal(stack.fake.requests.length - before, 2);
    // A call the provider held for a while before the connection dropped is not sent again.
    stack.fake.script({ fault: "hang_before_headers", hangMs: 900 });
    before = stack.fake.requests.length;
    const held = await chatJson({ ...request, provider: "fake-openai" });
    assert.deepEqual([held.status, JSON.parse(held.text).error.code], [502, "upstream_error"]);
    assert.equal(stack.fake.requests.length - before, 1);
  });

  test("the timeout is the configured one", async () => {
    stack.fake.script({ fault: "hang_before_headers" });
    const started = Date.now();
    await chatJson(request);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= TIMEOUT_MS - 100 && elapsed < TIMEOUT_MS + 5000, `${elapsed} ms`);
  });
});

describe("review findings", () => {
  test("an unknown conversation id cannot be claimed with a token of one's own", async () => {
    for (const turns of [0, 1]) {
      const claim = await chatJson({ conversation_id: "ab".repeat(16), turns, message: "x", current_config: {} }, { "x-conversation-token": "cd".repeat(16) });
      assert.deepEqual([claim.status, JSON.parse(claim.text).error.code], [404, "conversation_not_found"]);
    }
    const claim = await chatJson({ conversation_id: "ab".repeat(16), turns: 0, message: "x", current_config: {} }, { "x-conversation-token": "cd".repeat(16) });
    assert.deepEqual([claim.status, JSON.parse(claim.text).error.code], [404, "conversation_not_found"]);
  });

  test("an overlong workflow id is a 404, not a server error", async () => {
    assert.equal((await call("GET", `/api/workflows/${"a".repeat(600)}`)).status, 404);
    const turn = await chatJson({ workflow: "a".repeat(600), message: "x", current_config: {} });
    assert.deepEqual([turn.status, JSON.parse(turn.text).error.code], [404, "unknown_workflow"]);
  });

  test("Accept q-values are honoured", async () => {
    stack.fake.script({ reply: "Hi.\n" });
    const json = await call("POST", "/api/chat", { body: { message: "x", current_config: {} }, headers: { accept: "text/event-stream;q=0, application/json" } });
    assert.match(json.headers.get("content-type"), /application\/json/);
    const sse = await call("POST", "/api/chat", { body: { message: "x", current_config: {} }, headers: { accept: "application/json;q=0.5, text/event-stream" } });
    assert.match(sse.headers.get("content-type"), /text\/event-stream/);
  });

  test("a key echoed at the cut-off point of a long upstream message is still scrubbed", async () => {
    for (const padding of [285, 290, 295, 299]) {
      stack.fake.script({ status: 400, message: `${"y".repeat(padding)}${SECRET_KEY} and more` });
      const response = await chatJson({ message: "x", current_step: "purpose", current_config: {} });
      assert.equal(response.status, 502);
      assert.ok(!response.text.includes(SECRET_KEY.slice(0, 8)), `padding ${padding}: ${response.text.slice(-80)}`);
    }
  });
});

describe("keys and origins", () => {
  test("the key reaches the provider in its auth header", () => {
    const seen = stack.fake.requests.filter((r) => r.kind);
    const header = { openai: (h) => h.authorization === `Bearer ${SECRET_KEY}`, anthropic: (h) => h["x-api-key"] === SECRET_KEY, gemini: (h) => h["x-goog-api-key"] === SECRET_KEY };
    for (const kind of ["openai", "anthropic", "gemini"]) {
      const requests = seen.filter((r) => r.kind === kind);
      assert.ok(requests.length > 0 && requests.every((r) => header[kind](r.headers)), kind);
    }
  });

  test("CORS headers go to allowlisted origins only", async () => {
    const allowed = await call("GET", "/healthz", { headers: { origin: "http://allowed.example" } });
    assert.equal(allowed.headers.get("access-control-allow-origin"), "http://allowed.example");
    const other = await call("GET", "/healthz", { headers: { origin: "http://evil.example" } });
    assert.equal(other.headers.get("access-control-allow-origin"), null);
    const preflight = await fetch(`${stack.base}/api/chat`, { method: "OPTIONS", headers: { origin: "http://allowed.example", "access-control-request-method": "POST" } });
    assert.equal(preflight.status, 204);
    assert.match(preflight.headers.get("access-control-allow-headers"), /x-conversation-token/);
  });

  test("the key never appears in a response, an event or a log line", () => {
    assert.ok(bodies.length > 100);
    for (const body of bodies) assert.ok(!body.includes(SECRET_KEY), "a response contains the key");
    assert.ok(!stack.log().includes(SECRET_KEY), "the wrangler log contains the key");
  });
});

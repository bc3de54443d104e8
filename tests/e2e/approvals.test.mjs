// End-to-end tests of tool approval under `wrangler dev`: the fake provider calls a tool that
// changes data (in all three wire formats); the turn ends with `approval_required` and nothing
// runs. Approving runs the call exactly once in a turn of its own (a double click and a retry
// find it settled; one research job is made), edits are checked against the tool's schema, a
// denial's reason reaches the model, an unanswered approval expires by the conversation's alarm,
// every tab hears each decision over the WebSocket, and strangers see nothing.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SECRET_KEY, apiCaller, fakeProvider, newOwner, parseSse, startStack } from "./harness.mjs";
import { savedStream } from "./fixtures.mjs";

const TTL_MS = 8000;
let stack;
const bodies = [];

before(async () => {
  stack = await startStack({
    providers: (url) => [...["openai", "anthropic", "gemini"].map((kind) => fakeProvider(url, `fake-${kind}`, kind)), { name: "offline", kind: "offline" }],
    overrides: { APPROVAL_TTL_MS: String(TTL_MS), TOOL_TIMEOUT_MS: "10000" },
  });
});
after(async () => {
  await stack?.stop();
  for (const body of bodies) assert.ok(!body.includes(SECRET_KEY), "the provider key leaked");
});

const call = apiCaller(() => stack.base, bodies);
const RESEARCH = { current_page: "research" };

/** A turn over SSE as `owner`: status, events, and the answer of `complete`. */
async function turn(owner, body, path = "/api/assistant") {
  const response = await call("POST", path, { owner, body, headers: { accept: "text/event-stream" } });
  const events = response.status === 200 ? parseSse(response.text) : [];
  return { ...response, events, answer: events.at(-1)?.data?.payload };
}

/** Scripts a model that calls `tool` with `args` when tools are offered and answers with text
 * once it has a tool result (or when no tools are offered: the research job's own calls). */
function scriptCall(tool, args) {
  stack.fake.script((request) => {
    const body = JSON.stringify(request.body);
    if (!body.includes(`"${tool}"`)) return { reply: "A report on the question." };
    if (/Started research job|Updated stream|error: /.test(body)) return { reply: "Done: it ran." };
    return { reply: "I will do that once you approve.", toolCalls: [{ name: tool, arguments: args }] };
  });
}

/** Asks for research so the model calls `start_research`; the held approval and the turn. */
async function heldResearch(owner, { provider = "fake-openai", args = { prompt: "EGFR resistance", providers: ["offline"], synthesis_provider: "offline" } } = {}) {
  scriptCall("start_research", args);
  const asked = await turn(owner, { message: "Start research on EGFR resistance", context: RESEARCH, provider });
  assert.equal(asked.status, 200, asked.text);
  return { ...asked, approval: asked.answer.approval, id: asked.answer.conversation_id };
}

const decide = (owner, id, approval, body, accept = "application/json") =>
  call("POST", `/api/assistant/conversations/${id}/approvals/${approval}`, { owner, body, headers: { accept } });
const jobs = async (owner) => (await call("GET", "/api/research?limit=20", { owner })).json.items;
const job = async (owner, id) => (await call("GET", `/api/research/${id}`, { owner })).json;
const stored = async (owner, id) => (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;

/** A WebSocket on a conversation as `owner`, collecting its events. */
async function watch(owner, id) {
  const ws = new WebSocket(`${stack.base.replace("http", "ws")}/api/assistant/conversations/${id}/ws`, ["stepwise.v1", `bearer.${owner}`]);
  const events = [];
  ws.addEventListener("message", (event) => events.push(JSON.parse(event.data)));
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("the WebSocket was refused")), { once: true });
  });
  return { ws, events, until: (found, ms = 20000) => until(() => events.find(found), ms) };
}

async function until(found, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await found();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a call that needs approval is held", () => {
  for (const kind of ["openai", "anthropic", "gemini"]) {
    test(`${kind}: the turn ends with approval_required, and nothing runs`, async () => {
      const owner = newOwner();
      const since = stack.fake.requests.length;
      const { events, answer, approval } = await heldResearch(owner, { provider: `fake-${kind}`, args: { prompt: "EGFR resistance" } });
      const types = events.map((e) => e.event);
      assert.deepEqual(types.slice(-2), ["approval_required", "complete"]);
      assert.ok(!types.includes("tool_start"), "nothing ran");
      assert.deepEqual(events.at(-2).data.approval, approval);
      // The server's defaults are written out: every configured provider, a synthesis.
      assert.deepEqual(approval.arguments, { prompt: "EGFR resistance", providers: ["fake-openai", "fake-anthropic", "fake-gemini", "offline"], synthesis_provider: "fake-openai" });
      assert.equal(approval.estimated_calls, 6);
      assert.equal(approval.state, "pending");
      assert.match(approval.summary, /^Start a research job on "EGFR resistance" with 4 providers/);
      assert.ok(approval.expires_at - approval.requested_at === TTL_MS);
      assert.equal(answer.message, "I will do that once you approve.");
      assert.equal(stack.fake.requests.length - since, 1, "one model call: the turn ends at the held call");
      assert.deepEqual(await jobs(owner), [], "no research job was made");
      const conversation = await stored(owner, answer.conversation_id);
      assert.deepEqual(conversation.messages[1].approval, approval, "kept with the answer");
      // The same wait in the one shape every interrupt has.
      assert.deepEqual(conversation.interrupts, [{
        id: approval.id, kind: "approval", state: "open", summary: approval.summary,
        opened_at: approval.requested_at, deadline: approval.expires_at,
        remind_at: approval.requested_at + TTL_MS / 2, reminded: false,
      }]);
    });
  }
});

describe("approving runs the call once", () => {
  test("approve streams the run, the model reads its result, and a second click or retry is settled", async () => {
    const owner = newOwner();
    const { id, approval } = await heldResearch(owner);
    const socket = await watch(owner, id);
    const since = stack.fake.requests.length;
    const run = await turn(owner, { decision: "approve" }, `/api/assistant/conversations/${id}/approvals/${approval.id}`);
    assert.equal(run.status, 200, run.text);
    const types = run.events.map((e) => e.event);
    const start = types.indexOf("tool_start");
    assert.ok(start >= 0 && types.indexOf("tool_complete") > start && types.at(-1) === "complete", types.join());
    assert.deepEqual(run.events[start].data.input, approval.arguments);
    assert.ok(run.events.some((e) => e.event === "tool_progress" && e.data.stage === "starting"));
    assert.equal(run.answer.message, "Done: it ran.");
    assert.match(run.answer.tool_history[0].output, /^Started research job [0-9a-f]{32} ".+" with 1 provider \(offline\)/);
    const toModel = JSON.stringify(stack.fake.requests.slice(since).map((r) => r.body));
    assert.match(toModel, /Started research job/, "the result went back to the model");
    assert.match(toModel, /Approved: Start a research job/, "with the owner's decision");
    const made = await jobs(owner);
    assert.equal(made.length, 1);
    assert.deepEqual(run.answer.suggested_actions, [{ label: "Open the research", action: "open_research", handler: "client", target: made[0].id }]);
    assert.equal((await job(owner, made[0].id)).prompt, "EGFR resistance");
    // Every tab hears it: approved, then its result.
    const ran = await socket.until((e) => e.type === "conversation:approval" && e.approval.result);
    assert.equal(ran.message, 1);
    assert.equal(ran.approval.state, "approved");
    // Each approval event is followed by the same change as an interrupt.
    const approvedAt = socket.events.findIndex((e) => e.type === "conversation:approval" && e.approval.state === "approved");
    const asInterrupt = socket.events[approvedAt + 1];
    assert.equal(asInterrupt.type, "conversation:interrupt", JSON.stringify(socket.events.map((e) => e.type)));
    assert.equal(asInterrupt.interrupt.id, approval.id);
    assert.equal(asInterrupt.interrupt.resolution, "approved");
    assert.equal(asInterrupt.interrupt.resolved_by, "owner");
    socket.ws.close();
    // A second click, a retry: settled, never run again.
    for (const body of [{ decision: "approve" }, { decision: "deny", reason: "late" }]) {
      const again = await decide(owner, id, approval.id, body);
      assert.equal(again.status, 409, again.text);
      assert.equal(again.json.error.code, "approval_settled");
    }
    assert.equal((await jobs(owner)).length, 1, "still one job");
    const conversation = await stored(owner, id);
    const kept = conversation.messages[1].approval;
    assert.equal(kept.state, "approved");
    assert.equal(kept.decided_by, "owner");
    assert.match(kept.result.output, /^Started research job/);
    assert.deepEqual(conversation.messages.slice(2).map((m) => [m.role, m.action ?? null]), [["user", "approve"], ["assistant", null]]);
    assert.match(conversation.messages[2].content, /^Approved: Start a research job on "EGFR resistance"/);
  });

  test("two tabs approving at once: one runs it, the other is refused, one job is made", async () => {
    const owner = newOwner();
    const { id, approval } = await heldResearch(owner);
    const both = await Promise.all([1, 2].map(() => decide(owner, id, approval.id, { decision: "approve" })));
    const statuses = both.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409], both.map((r) => r.text).join("\n"));
    const refused = both.find((r) => r.status === 409).json.error.code;
    assert.ok(["approval_settled", "turn_in_progress"].includes(refused), refused);
    assert.equal((await jobs(owner)).length, 1);
  });

  test("edited arguments are checked against the schema, then run as edited", async () => {
    const owner = newOwner();
    const { id, approval } = await heldResearch(owner);
    for (const [args, code] of [[{ prompt: "" }, "invalid_arguments"], [{ prompt: "x", providers: [] }, "invalid_arguments"], [{ prompt: "x", colour: "red" }, "invalid_arguments"]]) {
      const refused = await decide(owner, id, approval.id, { decision: "approve", arguments: args });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.json.error.code, code);
    }
    // A provider that is not configured is refused before anything runs; the approval waits on.
    const unknown = await decide(owner, id, approval.id, { decision: "approve", arguments: { prompt: "x", providers: ["nobody"] } });
    assert.equal(unknown.status, 422, unknown.text);
    assert.match(unknown.json.error.message, /`nobody` is not a configured provider/);
    assert.equal((await stored(owner, id)).messages[1].approval.state, "pending");
    assert.deepEqual(await jobs(owner), []);
    // Edited well.
    const second = { id, approval };
    const edited = { prompt: "EGFR resistance in NSCLC", providers: ["offline"], synthesis_provider: "offline" };
    const ran = await decide(owner, second.id, second.approval.id, { decision: "approve", arguments: edited });
    assert.equal(ran.status, 200, ran.text);
    const kept = (await stored(owner, second.id)).messages[1].approval;
    assert.deepEqual(kept.edited_arguments, edited);
    assert.equal((await job(owner, (await jobs(owner))[0].id)).prompt, "EGFR resistance in NSCLC");
  });

  test("update_stream_settings changes the stream only once approved, validated by the core", async () => {
    const owner = newOwner();
    const stream = await savedStream(call, owner);
    const context = { current_page: "streams", active_tab: "settings", stream_id: stream.id };
    scriptCall("update_stream_settings", { stream_id: stream.id, name: "EGFR watch", edits: [{ field: "keywords", value: ["EGFR", "amivantamab"] }] });
    const asked = await turn(owner, { message: "Rename it and set the keywords", context, provider: "fake-anthropic" });
    const approval = asked.answer.approval;
    assert.equal(approval.summary, `Change the settings of stream "${stream.name}": name to "EGFR watch"; keywords to [EGFR, amivantamab].`);
    assert.equal((await call("GET", `/api/streams/${stream.id}`, { owner })).json.name, stream.name, "unchanged while it waits");
    const ran = await decide(owner, asked.answer.conversation_id, approval.id, { decision: "approve" });
    assert.equal(ran.status, 200, ran.text);
    const changed = (await call("GET", `/api/streams/${stream.id}`, { owner })).json;
    assert.equal(changed.name, "EGFR watch");
    assert.deepEqual(changed.config.keywords, ["EGFR", "amivantamab"]);
    // An edit the workflow refuses: the run fails as a tool error, nothing changes.
    scriptCall("update_stream_settings", { stream_id: stream.id, edits: [{ field: "stream_type", value: "astrology" }] });
    const bad = await turn(owner, { conversation_id: asked.answer.conversation_id, message: "Make it astrology", context, provider: "fake-anthropic" });
    const failed = await decide(owner, bad.answer.conversation_id, bad.answer.approval.id, { decision: "approve" });
    assert.equal(failed.status, 200, failed.text);
    assert.equal(failed.json.tool_history[0].is_error, true, failed.text);
    assert.equal((await call("GET", `/api/streams/${stream.id}`, { owner })).json.config.stream_type, stream.config.stream_type);
  });
});

describe("denials, expiry and refusals", () => {
  test("a denial is kept with its reason, and the model reads it on the next turn", async () => {
    const owner = newOwner();
    const { id, approval } = await heldResearch(owner);
    const denied = await decide(owner, id, approval.id, { decision: "deny", reason: "Too costly this week" });
    assert.equal(denied.status, 200, denied.text);
    assert.equal(denied.json.approval.state, "denied");
    assert.equal(denied.json.approval.reason, "Too costly this week");
    const [interrupt] = (await stored(owner, id)).interrupts;
    assert.equal(interrupt.state, "resolved");
    assert.equal(interrupt.resolution, "denied");
    assert.equal(interrupt.reason, "Too costly this week");
    assert.equal(interrupt.resolved_at, denied.json.approval.decided_at);
    const late = await decide(owner, id, approval.id, { decision: "approve" });
    assert.equal(late.json.error.code, "approval_settled");
    stack.fake.script({ reply: "Understood." });
    const since = stack.fake.requests.length;
    const next = await turn(owner, { conversation_id: id, message: "What now?", context: RESEARCH, provider: "fake-openai" });
    assert.equal(next.status, 200, next.text);
    assert.match(JSON.stringify(stack.fake.requests[since].body), /denied by the user, who said: Too costly this week/);
    assert.deepEqual(await jobs(owner), []);
  });

  test("an approval nobody answers is reminded half way and expires at its deadline, by the conversation's alarm", async () => {
    const owner = newOwner();
    const { id, approval } = await heldResearch(owner);
    const socket = await watch(owner, id);
    const expired = await socket.until((e) => e.type === "conversation:approval" && e.approval.state === "expired", TTL_MS + 20000);
    socket.ws.close();
    // Half way, every tab was reminded first.
    const reminded = socket.events.findIndex((e) => e.type === "conversation:approval" && e.approval.state === "pending" && e.approval.reminded);
    assert.ok(reminded >= 0 && reminded < socket.events.indexOf(expired), JSON.stringify(socket.events.map((e) => e.type)));
    assert.equal(expired.approval.reason, "expired");
    assert.equal(expired.approval.decided_by, "system");
    const lapsed = socket.events.filter((e) => e.type === "conversation:interrupt").map((e) => e.interrupt);
    assert.deepEqual(lapsed.map((i) => [i.state, i.reminded, i.resolution ?? null]), [["open", true, null], ["resolved", true, "expired"]]);
    assert.equal(lapsed[1].resolved_by, "system");
    assert.equal((await stored(owner, id)).messages[1].approval.state, "expired");
    const late = await decide(owner, id, approval.id, { decision: "approve" });
    assert.equal(late.status, 409);
    assert.equal(late.json.error.code, "approval_expired");
    assert.deepEqual(await jobs(owner), []);
  });

  test("strangers, unknown ids and malformed decisions are refused, and nothing changes", async () => {
    const owner = newOwner();
    const { id, approval } = await heldResearch(owner);
    const stranger = await decide(newOwner(), id, approval.id, { decision: "approve" });
    assert.equal(stranger.status, 404);
    assert.equal(stranger.json.error.code, "conversation_not_found");
    const unknown = await decide(owner, id, "0".repeat(32), { decision: "approve" });
    assert.equal(unknown.json.error.code, "approval_not_found");
    for (const body of [{ decision: "maybe" }, {}, { decision: "deny", arguments: {} }, { decision: "approve", reason: "x" }, { decision: "deny", reason: "x".repeat(501) }]) {
      const refused = await decide(owner, id, approval.id, body);
      assert.ok([400, 422].includes(refused.status), `${JSON.stringify(body).slice(0, 60)}: ${refused.text}`);
    }
    const form = await call("POST", `/api/assistant/conversations/${id}/approvals/${approval.id}`, { owner, raw: "decision=approve", headers: { "content-type": "application/x-www-form-urlencoded" } });
    assert.equal(form.status, 415);
    assert.equal((await stored(owner, id)).messages[1].approval.state, "pending", "still decidable");
  });
});

describe("protocols", () => {
  test("the AI SDK's UI message stream carries the held call as a tool part awaiting approval", async () => {
    const owner = newOwner();
    scriptCall("start_research", { prompt: "EGFR resistance", providers: ["offline"] });
    const response = await call("POST", "/api/assistant", { owner, body: { message: "Start research", context: RESEARCH, provider: "fake-gemini" }, headers: { accept: "text/event-stream", "x-stepwise-format": "ui-message-stream" } });
    assert.equal(response.status, 200, response.text);
    const chunks = response.text.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)));
    const input = chunks.find((c) => c.type === "tool-input-available");
    const request = chunks.find((c) => c.type === "tool-approval-request");
    assert.equal(input.toolName, "start_research");
    assert.deepEqual(input.input, { prompt: "EGFR resistance", providers: ["offline"] });
    assert.equal(request.toolCallId, input.toolCallId);
    assert.match(request.approvalId, /^[0-9a-f]{32}$/);
    assert.ok(chunks.indexOf(request) > chunks.indexOf(input));
  });
});

describe("the kill switch", () => {
  const state = mkdtempSync(join(tmpdir(), "stepwise-approval-kill-"));
  after(() => rmSync(state, { recursive: true, force: true }));

  test("with model calls off, approving is refused and nothing runs; denying still works", async () => {
    const owner = newOwner();
    const providers = (url) => [fakeProvider(url, "fake-openai", "openai"), { name: "offline", kind: "offline" }];
    const overrides = { LLM_PROVIDER: "fake-openai", APPROVAL_TTL_MS: "600000" };
    let id;
    let approval;
    const first = await startStack({ persist: state, providers, overrides });
    try {
      first.fake.script((request) => JSON.stringify(request.body).includes('"start_research"')
        ? { reply: "Shall I?", toolCalls: [{ name: "start_research", arguments: { prompt: "EGFR", providers: ["offline"], synthesis_provider: "offline" } }] }
        : { reply: "A report." });
      const asked = await apiCaller(() => first.base)("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body: { message: "Start research on EGFR", context: RESEARCH } });
      assert.equal(asked.status, 200, asked.text);
      ({ conversation_id: id, approval } = asked.json);
      assert.equal(approval.state, "pending");
    } finally {
      await first.stop();
    }
    const off = await startStack({ persist: state, providers, overrides: { ...overrides, MODEL_CALLS_DISABLED: "true" } });
    try {
      const offCall = apiCaller(() => off.base);
      const path = `/api/assistant/conversations/${id}/approvals/${approval.id}`;
      const approve = await offCall("POST", path, { owner, headers: { accept: "application/json" }, body: { decision: "approve" } });
      assert.equal(approve.status, 503, approve.text);
      assert.equal(approve.json.error.code, "model_calls_disabled");
      const kept = (await offCall("GET", `/api/assistant/conversations/${id}`, { owner })).json.messages[1].approval;
      assert.equal(kept.state, "pending", "nothing changed");
      // The same over AG-UI: a resume that approves is refused, one that denies is taken.
      const run = (payload) => offCall("POST", "/api/agui", { owner, headers: { accept: "text/event-stream" }, body: { threadId: "t", runId: "r", messages: [], state: {}, tools: [], context: [], forwardedProps: { agent: "assistant", conversation_id: id }, resume: [{ interruptId: approval.id, status: "resolved", payload }] } });
      const approveRun = await run({ approved: true });
      assert.deepEqual([approveRun.status, approveRun.json?.error?.code], [503, "model_calls_disabled"], approveRun.text);
      const deny = await run({ approved: false, reason: "Not while paused" });
      assert.equal(deny.status, 200, deny.text);
      assert.match(deny.text, /"type":"RUN_FINISHED"/);
      const denied = (await offCall("GET", `/api/assistant/conversations/${id}`, { owner })).json.messages[1].approval;
      assert.deepEqual([denied.state, denied.reason], ["denied", "Not while paused"]);
      const late = await offCall("POST", path, { owner, body: { decision: "deny", reason: "again" } });
      assert.deepEqual([late.status, late.json.error.code], [409, "approval_settled"]);
      assert.deepEqual(off.fake.requests, [], "no provider was called");
      assert.equal((await offCall("GET", "/api/research?limit=5", { owner })).json.items.length, 0);
    } finally {
      await off.stop();
    }
  });
});

// End-to-end tests of context on request (context-handshake.md) under `wrangler dev`: the
// baseline from a stream and its job, automatic supply with no user step, a deferred turn that
// a user supply resumes (partial supplies wait), the model's own CONTEXT_REQUEST, the SLA's
// reminder and fallback, "Run without context", WebSocket events seen by two clients, owner
// isolation, prompt sheets (a broken one refused at PUT), artifacts and telemetry.
import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ADMIN_TOKEN, SECRET_KEY, apiCaller, fakeProvider, newOwner, startStack } from "./harness.mjs";
import { assertSchema } from "../contract.mjs";
import { completedJob as fixtureJob, savedStream } from "./fixtures.mjs";

const SLA_MS = 4000;
let stack;
const bodies = [];
/** What the fake model answers assistant calls with: a text, or a function of the request. */
let assistantAnswer = "Plain answer.";

before(async () => {
  stack = await startStack({
    providers: (url) => [fakeProvider(url, "fake-openai", "openai"), fakeProvider(url, "fake-anthropic", "anthropic"), { name: "offline", kind: "offline" }],
    overrides: { CONTEXT_SLA_MS: String(SLA_MS) },
  });
  stack.fake.script((request) => {
    const text = JSON.stringify(request.body);
    if (request.system?.startsWith("You name")) return { reply: "EGFR review" };
    if (text.includes("=== Source")) return { reply: 'Synthesis: the reports agree on dosing.\nPOINTS_OF_INTEREST: ["Dose escalation", "Pricing pressure"]\n' };
    if (!request.system?.includes("Stepwise assistant")) return { reply: "Provider report: EGFR inhibitors at 80 mg." };
    return { reply: typeof assistantAnswer === "function" ? assistantAnswer(request) : assistantAnswer };
  });
});
afterEach(() => {
  assistantAnswer = "Plain answer.";
});
after(async () => {
  await stack?.stop();
  for (const body of bodies) assert.ok(!body.includes(SECRET_KEY), "the provider key leaked");
});

const call = apiCaller(() => stack.base, bodies);
const json = { accept: "application/json" };
const assistantCalls = (since) => stack.fake.requests.filter((r) => r.at >= since && r.system?.includes("Stepwise assistant"));

/** A completed research job of `owner` (a synthesis with points of interest). */
const completedJob = (owner, fields = {}) =>
  fixtureJob(call, owner, { prompt: "Compare EGFR inhibitors", selected_llms: ["fake-openai", "fake-anthropic"], synthesis_llm: "fake-openai", ...fields });

/** An assistant turn in JSON mode. */
const ask = (owner, body) => call("POST", "/api/assistant", { owner, headers: json, body: { provider: "fake-openai", ...body } });

/** A WebSocket on a conversation as `owner`, collecting its events. */
async function watch(owner, id) {
  const url = `${stack.base.replace("http", "ws")}/api/assistant/conversations/${id}/ws`;
  const ws = new WebSocket(url, ["stepwise.v1", `bearer.${owner}`]);
  const events = [];
  ws.addEventListener("message", (event) => events.push(JSON.parse(event.data)));
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("the WebSocket was refused")), { once: true });
  });
  assert.equal(ws.protocol, "stepwise.v1");
  return { ws, events, until: (test, ms = 15000) => until(() => events.find(test), ms) };
}

async function until(found, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = found();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stats = async (owner) => (await call("GET", "/api/assistant/stats", { owner })).json.owner;

describe("the baseline and automatic supply", () => {
  test("a stream's goal and its job's phase-3 outputs are in every turn's prompt", async () => {
    const owner = newOwner();
    const stream = await savedStream(call, owner);
    const job = await completedJob(owner, { stream_id: stream.id });
    assert.deepEqual(job.points_of_interest, ["Dose escalation", "Pricing pressure"]);
    assert.equal(job.synthesized_result, "Synthesis: the reports agree on dosing.");
    const since = Date.now();
    const answer = await ask(owner, { message: "Hello", context: { current_page: "streams", stream_id: stream.id }, writing_style: "concise" });
    assert.equal(answer.status, 200, answer.text);
    const system = assistantCalls(since)[0].system;
    const order = ["## Writing style", "## Your role", "## What is loaded", "## The user's guidance", "## Current goal", "## Phase 3 outputs"].map((h) => system.indexOf(h));
    assert.ok(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1])), system.slice(-2500));
    assert.match(system, /Track EGFR resistance research for our lung programme, in service of: Pipeline decisions, Partnering\./);
    assert.match(system, /- Dose escalation\n- Pricing pressure/);
    assert.match(system, /at most three sentences/);
    const read = await call("GET", `/api/assistant/conversations/${answer.json.conversation_id}`, { owner });
    assert.equal(read.json.writing_style, "concise");
    const refused = await ask(owner, { message: "Hi", context: { current_page: "chat" }, writing_style: "shouty" });
    assert.deepEqual([refused.status, refused.json.error.code], [422, "invalid_request"]);
    const other = await call("POST", "/api/research/draft", { owner: newOwner(), body: { prompt: "x", stream_id: stream.id } });
    assert.equal(other.status, 404, "a stream of another owner cannot be named");
  });

  test("what the system holds is supplied with no user step", async () => {
    const owner = newOwner();
    const job = await completedJob(owner);
    const since = Date.now();
    const answer = await ask(owner, { message: "What did each model say about dosing?", context: { current_page: "research", report_id: job.id } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.message, "Plain answer.");
    const system = assistantCalls(since)[0].system;
    assert.match(system, /## Supplied Context Attachments\nFor the user message [0-9a-f]{32}:\n### \[Phase 2\] Phase 2 reports of every provider of the research job \(research\/[0-9a-f]{32}\/llm_results\/\*\/result, supplied automatically\)\n### fake-openai\nProvider report: EGFR inhibitors at 80 mg\.\n\n### fake-anthropic\n/);
    const read = await call("GET", `/api/assistant/conversations/${answer.json.conversation_id}`, { owner });
    const [request] = read.json.context_requests;
    assert.deepEqual([request.status, request.origin, request.slots[0].supply.by], ["resolved", "analyzer", "system"]);
    assert.equal(read.json.messages[0].request_id, request.request_id);
    const figures = await stats(owner);
    assert.deepEqual([figures.issued, figures.fulfilled_automatically, figures.fulfilled_by_user], [1, 1, 0]);
    assert.equal(typeof figures.median_ms_to_fulfil, "number");
  });

  test("a search kept for a stream is phase-1 literature the analyzer can supply", async () => {
    const owner = newOwner();
    const stream = await savedStream(call, owner);
    const search = await call("GET", `/api/articles/search?query=EGFR&stream_id=${stream.id}`, { owner });
    assert.equal(search.status, 200, search.text);
    const listed = await call("GET", `/api/assistant/artifacts?stream_id=${stream.id}`, { owner });
    const literature = listed.json.artifacts.find((a) => a.key_path === `stream/${stream.id}/literature/search`);
    assert.deepEqual([literature.phase, literature.artifact_type], [1, "literature_search"]);
    assert.ok(literature.chars > 20);
    const since = Date.now();
    const answer = await ask(owner, { message: "What do the search results show?", context: { current_page: "streams", stream_id: stream.id } });
    assert.equal(answer.status, 200, answer.text);
    assert.match(assistantCalls(since)[0].system, /\[Phase 1\] Phase 1 literature search of the stream[^\n]*\nQuery: EGFR\nMatches: \d+/);
  });

  test("what does not exist yet, or is on screen, is never asked for: the turn answers at once", async () => {
    const owner = newOwner();
    const draft = await call("POST", "/api/research/draft", { owner, body: { prompt: "Compare EGFR inhibitors", selected_llms: ["fake-openai"], synthesis_llm: "fake-openai" } });
    assert.equal(draft.status, 201, draft.text);
    const single = await completedJob(owner, { selected_llms: ["fake-openai"] });
    for (const id of [draft.json.id, single.id]) {
      const answer = await ask(owner, { message: "Which findings matter most?", context: { current_page: "research", report_id: id } });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.json.message, "Plain answer.", answer.text);
    }
    const stream = await savedStream(call, owner);
    const onScreen = { current_page: "streams", active_tab: "articles", stream_id: stream.id, results: { total: 2, loaded: 2 }, item_summaries: [{ pmid: "31", title: "EGFR resistance" }, { pmid: "32", title: "Osimertinib" }] };
    const since = Date.now();
    const articles = await ask(owner, { message: "What do the articles say?", context: onScreen });
    assert.equal(articles.status, 200, articles.text);
    assert.equal(articles.json.message, "Plain answer.", articles.text);
    assert.match(assistantCalls(since)[0].system, /EGFR resistance/);
    assert.equal((await stats(owner)).issued, 0, "no request was issued");
  });
});

describe("deferred turns", () => {
  test("a user supply resumes the turn; a partial supply waits; nothing else runs meanwhile", async () => {
    const owner = newOwner();
    const job = await completedJob(owner);
    const deferred = await ask(owner, { message: "Compare the findings with my notes", context: { current_page: "research" } });
    assert.equal(deferred.status, 200, deferred.text);
    const waiting = deferred.json;
    assert.equal(waiting.status, "context_required");
    assert.deepEqual(waiting.required.map((s) => s.artifact_type), ["points_of_interest", "note"]);
    const suggestion = waiting.required[0].suggestions[0];
    assert.equal(suggestion.key_path, `research/${job.id}/synthesis/points_of_interest`);
    assert.match(suggestion.excerpt, /Dose escalation/);
    const id = waiting.conversation_id;
    const read = await call("GET", `/api/assistant/conversations/${id}`, { owner });
    assert.deepEqual([read.json.messages[0].status, read.json.waiting], ["waiting_context", waiting.request_id]);

    const partial = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id: waiting.request_id, payloads: [{ slot: waiting.required[1].slot, text: "My note: dosing matters most." }] } });
    assert.equal(partial.json.status, "waiting_context", partial.text);
    const busy = await ask(owner, { conversation_id: id, message: "Anything else?", context: { current_page: "research" } });
    assert.deepEqual([busy.status, busy.json.error.code], [409, "context_pending"]);
    const bad = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id: waiting.request_id, payloads: [{ slot: "s1", key_path: "research/../../etc" }] } });
    const unknown = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id: waiting.request_id, payloads: [{ slot: "s9", text: "x" }] } });
    assert.deepEqual([unknown.status, unknown.json.error.code], [422, "unknown_slot"]);
    const resumeEarly = await call("POST", `/api/assistant/conversations/${id}/requests/nope/force`, { owner });
    assert.deepEqual([resumeEarly.status, resumeEarly.json.error.code], [404, "context_request_not_found"]);
    assert.deepEqual([bad.status, bad.json.error.code], [422, "invalid_key_path"]);
    const both = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id: waiting.request_id, payloads: [{ slot: "s1", key_path: suggestion.key_path, text: "x" }] } });
    assert.equal(both.status, 422);

    const since = Date.now();
    const answered = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id: waiting.request_id, payloads: [{ slot: waiting.required[0].slot, key_path: suggestion.key_path }] } });
    assert.equal(answered.status, 200, answered.text);
    assert.deepEqual([answered.json.status, answered.json.answer.message], ["answered", "Plain answer."]);
    const [model] = assistantCalls(since);
    assert.match(model.system, /\[Phase 3\] Phase 3 points of interest of the research job \(research\/[0-9a-f]{32}\/synthesis\/points_of_interest, supplied by the user\)\n- Dose escalation/);
    assert.match(model.system, /\(typed by the user, supplied by the user\)\nMy note: dosing matters most\./);
    assert.equal(model.body.messages.at(-1).content, "Compare the findings with my notes");
    const after = await call("GET", `/api/assistant/conversations/${id}`, { owner });
    assert.deepEqual(after.json.messages.map((m) => [m.role, m.status ?? null]), [["user", "answered"], ["assistant", null]]);
    assert.equal(after.json.waiting, null);
    assert.equal(after.json.context_requests[0].slots.find((s) => s.artifact_type === "note").supply.by, "user");
    const figures = await stats(owner);
    assert.deepEqual([figures.issued, figures.fulfilled_by_user, figures.open], [1, 1, 0]);
    const late = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id: waiting.request_id, payloads: [{ slot: waiting.required[1].slot, text: "again" }] } });
    assert.deepEqual([late.status, late.json.error.code], [404, "context_request_not_found"]);
    // The note supplied for the first turn is carried into the next: it is not asked for again.
    const nextSince = Date.now();
    const next = await ask(owner, { conversation_id: id, message: "And how does that compare with my notes on pricing?", context: { current_page: "research" } });
    assert.equal(next.status, 200, next.text);
    assert.equal(next.json.message, "Plain answer.", next.text);
    assert.match(assistantCalls(nextSince)[0].system, /\(typed by the user, supplied by the user\)\nMy note: dosing matters most\./);
  });

  test("the model may ask by itself: filled automatically it answers; a note defers the turn (SSE)", async () => {
    const owner = newOwner();
    const job = await completedJob(owner);
    const path = `research/${job.id}/llm_results/fake-openai/result`;
    assistantAnswer = (request) =>
      request.system.includes("## Supplied Context Attachments")
        ? "Final answer with the report."
        : `I need the provider's report.\nCONTEXT_REQUEST: {"slots": [{"phase": 2, "artifact_type": "llm_result", "key_path": "${path}", "description": "The provider report"}]}\n`;
    const since = Date.now();
    const answer = await ask(owner, { message: "Summarize it", context: { current_page: "chat" } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.message, "Final answer with the report.");
    assert.ok(!(answer.json.payloads ?? []).some((p) => p.type === "context_request"));
    const calls = assistantCalls(since);
    assert.equal(calls.length, 2);
    assert.match(calls[1].system, /\[Phase 2\] The provider report \(research\/[0-9a-f]{32}\/llm_results\/fake-openai\/result, supplied automatically\)\nProvider report/);

    assistantAnswer = 'Please share your draft.\nCONTEXT_REQUEST: {"slots": [{"phase": 0, "artifact_type": "note", "description": "Your draft"}]}\n';
    const sse = await call("POST", "/api/assistant", { owner, headers: { accept: "text/event-stream" }, body: { provider: "fake-openai", message: "Review the text I am writing", context: { current_page: "chat" } } });
    const events = sse.text.split("\n\n").filter(Boolean).map((frame) => frame.match(/^event: (.+)$/m)?.[1]);
    assert.equal(events.at(-1), "context_required", sse.text.slice(-600));
    const data = JSON.parse(sse.text.split("\n\n").filter(Boolean).at(-1).match(/^data: (.+)$/m)[1]);
    assert.equal(data.payload.required[0].description, "Your draft");
    assert.equal(data.payload.request.origin, "model");
  });

  test("a request met by skipping its slot answers at once and counts as skipped, not automatic", async () => {
    const owner = newOwner();
    const deferred = await ask(owner, { message: "Compare this with my notes", context: { current_page: "chat" } });
    assert.equal(deferred.json.status, "context_required", deferred.text);
    const { conversation_id: id, request_id } = deferred.json;
    const answered = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id, skip: [deferred.json.required[0].slot] } });
    assert.equal(answered.status, 200, answered.text);
    assert.equal(answered.json.status, "answered");
    assert.match(answered.json.answer.message, /^⚠ Answered without what you skipped: Your notes[^\n]*\n\nPlain answer\.$/);
    // The request as an interrupt: skipped by the user.
    const [interrupt] = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json.interrupts;
    assert.deepEqual([interrupt.id, interrupt.kind, interrupt.state, interrupt.resolution, interrupt.resolved_by], [request_id, "context_request", "resolved", "skipped", "user"]);
    const figures = await stats(owner);
    assert.deepEqual([figures.issued, figures.fulfilled_automatically, figures.fulfilled_by_user, figures.skipped, figures.open], [1, 0, 0, 1, 0]);
  });

  test("a model that asks again after its supply is answered as is: no request card, a diagnostic", async () => {
    const owner = newOwner();
    const job = await completedJob(owner);
    const path = `research/${job.id}/llm_results/fake-openai/result`;
    assistantAnswer = `Let me see the report.\nCONTEXT_REQUEST: {"slots": [{"phase": 2, "artifact_type": "llm_result", "key_path": "${path}", "description": "The provider report"}]}\n`;
    const since = Date.now();
    const answer = await ask(owner, { message: "Summarize it", context: { current_page: "chat" } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(assistantCalls(since).length, 2, "asked once more, with the supply");
    assert.equal(answer.json.message, "Let me see the report.");
    assert.equal(answer.json.custom_payload, undefined, JSON.stringify(answer.json.custom_payload));
    assert.ok(!(answer.json.payloads ?? []).some((p) => p.type === "context_request"));
    assert.deepEqual(answer.json.diagnostics.map((d) => d.code), ["context_request_ignored"]);
    const read = await call("GET", `/api/assistant/conversations/${answer.json.conversation_id}`, { owner });
    const stored = read.json.messages.at(-1);
    assert.ok(!stored.custom_payload && !(stored.payloads ?? []).length, JSON.stringify(stored));
  });
});

describe("waiting, reminders and overrides", () => {
  test("the SLA sends a reminder at half, then runs the turn without the context, warned", async () => {
    const owner = newOwner();
    const deferred = await ask(owner, { message: "Compare this with my notes", context: { current_page: "chat" } });
    assert.equal(deferred.json.status, "context_required", deferred.text);
    const { ws, events, until: seen } = await watch(owner, deferred.json.conversation_id);
    const reminder = await seen((e) => e.type === "conversation:context_reminder");
    assert.equal(reminder.request_id, deferred.json.request_id);
    const resolved = await seen((e) => e.type === "conversation:context_resolved");
    assert.equal(resolved.request.status, "fell_back");
    // The same life as an interrupt: reminded, then expired by the system at its deadline.
    const lived = events.filter((e) => e.type === "conversation:interrupt").map((e) => e.interrupt);
    assert.deepEqual(lived.map((i) => [i.kind, i.state, i.reminded, i.resolution ?? null]).slice(-2), [["context_request", "open", true, null], ["context_request", "resolved", true, "expired"]]);
    assert.equal(lived.at(-1).resolved_by, "system");
    assert.equal(lived.at(-1).deadline, lived.at(-1).opened_at + resolved.request.sla_ms);
    const message = await seen((e) => e.type === "conversation:message" && e.message.role === "assistant", 20000);
    assert.match(message.message.content, /^⚠ Answered without the context asked for: it was not supplied in time\.\n\nPlain answer\./);
    // The fallback's turn streams to the watching tabs as any turn does: begun, then its events.
    const began = events.find((e) => e.type === "conversation:turn_started");
    assert.ok(began, "the fallback's turn was announced");
    assert.ok(events.some((e) => e.type === "conversation:turn_event" && e.event.type === "model_delta" && e.event.text.startsWith("⚠") && Math.floor(e.seq / 1_000_000) === began.lease), JSON.stringify(events.filter((e) => e.type.startsWith("conversation:turn")).slice(0, 4)));
    ws.close();
    const read = await call("GET", `/api/assistant/conversations/${deferred.json.conversation_id}`, { owner });
    assert.deepEqual(read.json.messages.map((m) => m.role), ["user", "assistant"]);
    assert.equal((await stats(owner)).fallen_back, 1);
  });

  test("Run without context answers at once; two watching clients see the same events", async () => {
    const owner = newOwner();
    const first = await ask(owner, { message: "Hello", context: { current_page: "chat" } });
    const id = first.json.conversation_id;
    const a = await watch(owner, id);
    const b = await watch(owner, id);
    const deferred = await ask(owner, { conversation_id: id, message: "Check my draft against my notes", context: { current_page: "chat" } });
    assert.equal(deferred.json.status, "context_required");
    for (const client of [a, b]) {
      await client.until((e) => e.type === "conversation:context_request");
      await client.until((e) => e.type === "conversation:message" && e.message.status === "waiting_context");
    }
    const forced = await call("POST", `/api/assistant/conversations/${id}/requests/${deferred.json.request_id}/force`, { owner });
    assert.equal(forced.status, 200, forced.text);
    assert.match(forced.json.answer.message, /^⚠ Answered without the context asked for: you chose to run without it\./);
    for (const client of [a, b]) {
      await client.until((e) => e.type === "conversation:context_resolved" && e.request.status === "forced");
      await client.until((e) => e.type === "conversation:interrupt" && e.interrupt.resolution === "forced" && e.interrupt.id === deferred.json.request_id);
      await client.until((e) => e.type === "conversation:message" && e.message.role === "assistant");
      client.ws.close();
    }
    const types = (events) => events.map((e) => e.type).filter((t) => t !== "conversation:delta");
    assert.deepEqual(types(a.events), types(b.events));
    // Every event the socket sent is a `ConversationEvent` of the contract.
    for (const event of a.events) assertSchema("ConversationEvent", event);
    assert.equal((await stats(owner)).forced, 1);
  });

  test("another owner cannot watch, supply, force or list anything", async () => {
    const owner = newOwner();
    const job = await completedJob(owner);
    const deferred = await ask(owner, { message: "Compare this with my notes", context: { current_page: "chat" } });
    const stranger = newOwner();
    const { conversation_id: id, request_id } = deferred.json;
    await assert.rejects(watch(stranger, id), /refused/);
    const supplied = await call("POST", "/api/assistant/context-supply", { owner: stranger, body: { conversation_id: id, request_id, payloads: [{ slot: "s1", text: "x" }] } });
    assert.deepEqual([supplied.status, supplied.json.error.code], [404, "conversation_not_found"]);
    const forced = await call("POST", `/api/assistant/conversations/${id}/requests/${request_id}/force`, { owner: stranger });
    assert.equal(forced.status, 404);
    const artifacts = await call("GET", `/api/assistant/artifacts?research_id=${job.id}`, { owner: stranger });
    assert.equal(artifacts.status, 404);
    const theirs = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id, payloads: [{ slot: "s1", key_path: `research/${job.id}/prompt` }] } });
    assert.equal(theirs.status, 200, "the owner may attach any artifact of theirs");
    const notMine = await call("POST", "/api/assistant/context-supply", { owner: stranger, body: { conversation_id: id, request_id, payloads: [{ slot: "s1", key_path: `research/${job.id}/prompt` }] } });
    assert.equal(notMine.status, 404);
    assert.equal((await stats(stranger)).issued, 0);
  });
});

describe("prompt sheets and artifacts", () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const sheet = (page) => `/api/prompt-sheets/${page}`;

  test("a broken sheet is refused at PUT with its line; a valid override words the next turn", async () => {
    const builtin = await fetch(stack.base + sheet("default.question")).then((r) => r.json());
    assert.equal(builtin.source, "builtin");
    assert.ok(builtin.sections.includes("attachments") && builtin.styles.includes("executive"));
    const put = (id, text, headers = admin) => fetch(stack.base + sheet(id), { method: "PUT", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ text }) });
    assert.equal((await put("chat.question", builtin.text, {})).status, 403);
    const broken = builtin.text.replace("{synthesized_goal}", "{synthesised_goal}");
    const refused = await put("chat.question", broken);
    const error = (await refused.json()).error;
    assert.equal(refused.status, 422);
    assert.equal(error.code, "invalid_prompt_sheet");
    const line = builtin.text.split("\n").findIndex((l) => l.includes("{synthesized_goal}")) + 1;
    assert.match(error.message, new RegExp(`^line ${line}: unknown placeholder \`\\{synthesised_goal\\}\``));
    assert.equal((await put("chat.nonsense", builtin.text)).status, 404);
    const worded = builtin.text.replace("## Writing style", "## HOW TO WRITE (override)");
    assert.equal((await put("chat.question", worded)).status, 200);
    assert.equal((await fetch(stack.base + sheet("chat.question")).then((r) => r.json())).source, "override");
    const since = Date.now();
    await ask(newOwner(), { message: "What is Stepwise?", context: { current_page: "chat" } });
    assert.match(assistantCalls(since)[0].system, /## HOW TO WRITE \(override\)/);
    const action = Date.now();
    await ask(newOwner(), { message: "Draft a short summary of Stepwise", context: { current_page: "chat" } });
    assert.doesNotMatch(assistantCalls(action)[0].system, /override/, "another mode keeps the built-in sheet");
  });

  test("artifacts list what the caller owns by phase, with sizes", async () => {
    const owner = newOwner();
    const job = await completedJob(owner);
    const listed = await call("GET", `/api/assistant/artifacts?research_id=${job.id}`, { owner });
    assert.equal(listed.status, 200, listed.text);
    const byPath = Object.fromEntries(listed.json.artifacts.map((a) => [a.key_path.replace(job.id, "ID"), [a.phase, a.artifact_type]]));
    assert.deepEqual(byPath, {
      "research/ID/prompt": [2, "research_prompt"],
      "research/ID/llm_results/fake-openai/result": [2, "llm_result"],
      "research/ID/llm_results/fake-anthropic/result": [2, "llm_result"],
      "research/ID/synthesis/summary": [3, "summary"],
      "research/ID/synthesis/points_of_interest": [3, "points_of_interest"],
      "research/ID/publication": [4, "publication"],
    });
    assert.equal((await call("GET", "/api/assistant/artifacts", { owner })).status, 422);
    // One artifact's text, as the model reads it, cut to `limit`.
    const path = `research/${job.id}/synthesis/points_of_interest`;
    const read = await call("GET", `/api/assistant/artifacts?key_path=${encodeURIComponent(path)}&limit=12`, { owner });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.json.key_path, path);
    assert.equal(read.json.text.length, 12);
    assert.ok(read.json.total_chars > 12 && read.json.end === 12, read.text);
    const whole = await call("GET", `/api/assistant/artifacts?key_path=${encodeURIComponent(path)}`, { owner });
    assert.match(whole.json.text, /Dose escalation/);
    const refusals = await Promise.all([
      call("GET", `/api/assistant/artifacts?key_path=${encodeURIComponent(path)}`, { owner: newOwner() }),
      call("GET", "/api/assistant/artifacts?key_path=research%2F..%2Fetc", { owner }),
      call("GET", `/api/assistant/artifacts?key_path=${encodeURIComponent(path)}&limit=0`, { owner }),
      call("GET", `/api/assistant/artifacts?key_path=${encodeURIComponent(path)}&limit=20001`, { owner }),
    ]);
    assert.deepEqual(refusals.map((r) => [r.status, r.json.error.code]), [[404, "not_found"], [422, "invalid_key_path"], [422, "invalid_request"], [422, "invalid_request"]]);
  });
});

describe("telemetry retention", () => {
  // A stack of its own, keeping context-request telemetry for 3 seconds.
  let short;
  before(async () => {
    short = await startStack({ overrides: { TELEMETRY_RETENTION_DAYS: String(3 / 86400) } });
    short.fake.script({ reply: "Plain answer." });
  });
  after(async () => {
    await short?.stop();
  });
  const shortCall = apiCaller(() => short.base);
  const defer = async (owner) => {
    const response = await shortCall("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body: { message: "Compare this with my notes", context: { current_page: "chat" } } });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.status, "context_required", response.text);
  };
  const issued = async (owner) => (await shortCall("GET", "/api/assistant/stats", { owner })).json.owner.issued;

  test("rows older than TELEMETRY_RETENTION_DAYS are deleted as new requests are issued", async () => {
    const early = newOwner();
    await defer(early);
    assert.equal(await issued(early), 1);
    await new Promise((r) => setTimeout(r, 3500));
    await defer(newOwner());
    assert.equal(await issued(early), 0, "the early request's row is gone");
  });
});

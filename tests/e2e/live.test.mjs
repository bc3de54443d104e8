// End-to-end tests of live assistant turns under `wrangler dev`: a turn runs in its conversation's
// Durable Object whether or not anyone reads it; a client that drops reconnects with
// `Last-Event-ID` and gets the rest exactly once; a second client joins the running turn; Stop
// aborts the provider's call and keeps the partial answer; a Worker restarted mid-turn leaves the
// answer `interrupted` and the conversation open; a resumed context request's turn streams to
// every tab and can be joined and stopped; one whose model call fails waits again instead of
// sticking; a waiting message's turn is told with the id it waited under, and one refused its
// model call keeps nothing; a turn that failed while another began after it is still joined by its
// number. The fake provider paces its deltas so turns last.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiCaller, asOwner, fakeProvider, newOwner, readEvents, shownText, startStack, until } from "./harness.mjs";

/** A reply of many short lines, streamed one provider event every `DELAY_MS`. */
const REPLY = Array.from({ length: 24 }, (_, i) => `Line ${i + 1} of a long, paced answer.`).join("\n");
const DELAY_MS = 80;
const providers = (url) => [fakeProvider(url, "fake-openai", "openai"), { name: "offline", kind: "offline" }];
const paced = (request) => (request.system?.includes("Stepwise assistant") ? { reply: REPLY, paced: true, delayMs: DELAY_MS } : { reply: "Other." });
const context = { current_page: "chat" };

const read = readEvents;
const shown = shownText;

function live(stack) {
  const call = apiCaller(() => stack.base);
  /** Posts a streamed assistant turn; `abort` drops the connection. */
  async function post(owner, body) {
    const controller = new AbortController();
    const response = await fetch(`${stack.base}/api/assistant`, {
      method: "POST",
      headers: { "content-type": "application/json", ...asOwner(owner) },
      body: JSON.stringify({ provider: "fake-openai", context, ...body }),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    const [id, waiting] = ["x-stepwise-conversation", "x-stepwise-waiting"].map((name) => response.headers.get(name));
    return { ...read(response), owner, id, waiting, abort: () => controller.abort() };
  }
  /** Joins conversation `id`'s turn after `lastEventId`. */
  async function join(owner, id, lastEventId) {
    const headers = { ...asOwner(owner), ...(lastEventId ? { "last-event-id": String(lastEventId) } : {}) };
    const response = await fetch(`${stack.base}/api/assistant/conversations/${id}/stream`, { headers });
    if (response.status === 200) return { status: 200, ...read(response) };
    return { status: response.status, text: await response.text(), done: Promise.resolve([]) };
  }
  const conversation = async (owner, id) => (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
  const turnCalls = (since) => stack.fake.requests.filter((r) => r.at >= since && r.system?.includes("Stepwise assistant"));
  return { call, post, join, conversation, turnCalls };
}

/** A tab watching conversation `id` over its WebSocket: what it was sent, and the waiting line
 * it was last told. */
function watcher(stack, owner, id, path = `/api/assistant/conversations/${id}/ws`, protocols = []) {
  const ws = new WebSocket(`${stack.base.replace("http", "ws")}${path}`, ["stepwise.v1", `bearer.${owner}`, ...protocols]);
  const seen = [];
  ws.addEventListener("message", (event) => seen.push(JSON.parse(event.data)));
  const opened = new Promise((resolve, reject) => (ws.addEventListener("open", resolve, { once: true }), ws.addEventListener("error", reject, { once: true })));
  const line = () => seen.findLast((e) => e.type === "conversation:waiting")?.messages;
  return { seen, opened, line, send: (message) => ws.send(JSON.stringify(message)), close: () => ws.close() };
}

describe("live turns", () => {
  let stack;
  let api;
  before(async () => {
    stack = await startStack({ providers });
    stack.fake.script(paced);
    api = live(stack);
  });
  after(() => stack?.stop());

  test("a client that drops after three deltas reconnects with Last-Event-ID and gets the rest once, in order; the provider was called once", async () => {
    const owner = newOwner();
    const whole = await api.post(owner, { message: "Tell me everything" });
    const reference = await whole.done;
    assert.equal(reference.at(-1).event, "complete");

    const since = Date.now();
    const id = whole.id;
    const first = await api.post(owner, { message: "Tell me everything again", conversation_id: id });
    await until(() => first.events.filter((e) => e.event === "text_delta").length >= 3);
    first.abort();
    const seen = first.events.slice();
    const last = seen.at(-1).id;
    await new Promise((r) => setTimeout(r, 4 * DELAY_MS));
    const rest = await api.join(owner, id, last);
    assert.equal(rest.status, 200, rest.text);
    const resumed = await rest.done;
    assert.ok(resumed.length > 0 && resumed.every((e) => e.id > last), "only later events");
    const ids = [...seen, ...resumed].map((e) => e.id);
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), "each event once, in order");
    assert.equal(resumed.at(-1).event, "complete");
    assert.equal(shown(seen) + shown(resumed), shown(reference), "the same text as an undisturbed client");
    assert.equal(api.turnCalls(since).length, 1, "one model call");
    const stored = await api.conversation(owner, id);
    assert.equal(stored.messages.at(-1).content, reference.at(-1).data.payload.message);
    assert.equal(stored.running, false);
  });

  test("a disconnect is not a Stop: the answer of a client that never comes back is stored whole", async () => {
    const owner = newOwner();
    const gone = await api.post(owner, { message: "Answer me while I am away" });
    await until(() => gone.events.some((e) => e.event === "text_delta"));
    gone.abort();
    const id = gone.id;
    assert.match(id, /^[0-9a-f]{32}$/, "the stream names its conversation before its first event");
    const stored = await until(async () => {
      const record = await api.conversation(owner, id);
      return record.messages.length === 2 && !record.running && record;
    });
    assert.deepEqual(stored.messages.map((m) => [m.role, m.status ?? null]), [["user", null], ["assistant", null]]);
    assert.equal(stored.messages[1].content, REPLY);
  });

  test("a turn whose client left before its tools ran still makes its next model call and stores the answer", async () => {
    const owner = newOwner();
    const since = Date.now();
    stack.fake.script((request) => {
      if (!request.system?.includes("Stepwise assistant")) return { reply: "Other." };
      if (JSON.stringify(request.body).includes("articles found")) return { reply: "Three articles, found after you left." };
      return { reply: "Searching now.\nStill searching.", paced: true, delayMs: 300, toolCalls: [{ name: "search_pubmed", arguments: { query: "EGFR resistance", max_results: 3 } }] };
    });
    try {
      const gone = await api.post(owner, { message: "Find EGFR resistance articles", context: { current_page: "streams", active_tab: "articles", search_form: { query: "" } } });
      await until(() => gone.events.some((e) => e.event === "text_delta"));
      gone.abort();
      const stored = await until(async () => {
        const record = await api.conversation(owner, gone.id);
        return record.messages.length === 2 && !record.running && record;
      });
      assert.equal(stored.messages[1].content, "Searching now.\nStill searching.\nThree articles, found after you left.");
      assert.equal(stored.messages[1].tool_history[0].tool_name, "search_pubmed");
      assert.equal(api.turnCalls(since).length, 2, "the second call was made after the client left");
    } finally {
      stack.fake.script(paced);
    }
  });

  test("Stop aborts the provider's call, keeps the partial answer marked stopped, and ends every client's stream with `stopped`", async () => {
    const owner = newOwner();
    const opened = await api.post(owner, { message: "Warm up" });
    const id = opened.id;
    await opened.done;
    const since = Date.now();
    const running = await api.post(owner, { message: "A long answer, please", conversation_id: id });
    await until(() => running.events.filter((e) => e.event === "text_delta").length >= 3);
    const watcher = await api.join(owner, id);
    assert.equal(watcher.status, 200, watcher.text);
    await until(() => watcher.events.some((e) => e.event === "text_delta"));
    const other = await api.call("POST", `/api/assistant/conversations/${id}/stop`, { owner: newOwner() });
    assert.deepEqual([other.status, other.json.error.code], [404, "conversation_not_found"]);
    const stop = await api.call("POST", `/api/assistant/conversations/${id}/stop`, { owner });
    assert.deepEqual([stop.status, stop.json], [200, { stopped: true }]);
    const [mine, theirs] = await Promise.all([running.done, watcher.done]);
    for (const events of [mine, theirs]) {
      assert.equal(events.at(-1).event, "stopped");
      assert.ok(!events.some((e) => e.event === "complete"));
    }
    const partial = mine.at(-1).data.message;
    assert.equal(partial, shown(mine));
    assert.ok(partial.length > 0 && partial.length < REPLY.length, partial);
    const call = await until(() => api.turnCalls(since)[0]?.closedEarly);
    assert.ok(call, "the provider saw its connection closed");
    const stored = await api.conversation(owner, id);
    assert.deepEqual(stored.messages.slice(2).map((m) => [m.role, m.status ?? null]), [["user", null], ["assistant", "stopped"]]);
    assert.equal(stored.messages.at(-1).content, partial);
    const again = await api.call("POST", `/api/assistant/conversations/${id}/stop`, { owner });
    assert.deepEqual(again.json, { stopped: false }, "nothing runs any more");
    const next = await api.post(owner, { message: "Next question", conversation_id: id });
    assert.equal((await next.done).at(-1).event, "complete", "the conversation takes new messages");
  });

  test("a resumed context request's turn is live: a watching tab streams it, a join gets it, Stop stops it and its JSON supply is told so", async () => {
    const owner = newOwner();
    const deferred = await api.call("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body: { provider: "fake-openai", message: "Compare this with my notes", context } });
    assert.equal(deferred.json.status, "context_required", deferred.text);
    const { conversation_id: id, request_id: requestId } = deferred.json;
    const slot = deferred.json.required.find((s) => s.artifact_type === "note").slot;
    const ws = new WebSocket(`${stack.base.replace("http", "ws")}/api/assistant/conversations/${id}/ws`, ["stepwise.v1", `bearer.${owner}`]);
    const seen = [];
    ws.addEventListener("message", (event) => seen.push(JSON.parse(event.data)));
    await new Promise((resolve) => ws.addEventListener("open", resolve, { once: true }));
    const since = Date.now();
    const supplying = api.call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: id, request_id: requestId, payloads: [{ slot, text: "My note: dosing matters most." }] } });
    // The other tab is told the turn began and streams it; a join gets it from its start.
    const began = await until(() => seen.find((e) => e.type === "conversation:turn_started"));
    assert.equal(began.message, null, "its message is stored already");
    await until(() => seen.filter((e) => e.type === "conversation:turn_event" && e.event.type === "model_delta").length >= 2);
    const joined = await api.join(owner, id);
    assert.equal(joined.status, 200, joined.text);
    await until(() => joined.events.some((e) => e.event === "text_delta"));
    assert.equal(Math.floor(joined.events[0].id / 1_000_000), began.lease);
    const stop = await api.call("POST", `/api/assistant/conversations/${id}/stop`, { owner });
    assert.deepEqual([stop.status, stop.json], [200, { stopped: true }]);
    const supplied = await supplying;
    assert.deepEqual([supplied.status, supplied.json.error.code], [409, "turn_stopped"]);
    const events = await joined.done;
    assert.equal(events.at(-1).event, "stopped");
    await until(() => seen.some((e) => e.type === "conversation:turn_event" && e.event.type === "stopped"));
    assert.ok(await until(() => api.turnCalls(since)[0]?.closedEarly), "the provider saw its connection closed");
    const stored = await api.conversation(owner, id);
    assert.equal(stored.waiting, null, "nothing waits any more");
    assert.deepEqual(stored.messages.map((m) => [m.role, m.status ?? null]), [["user", "answered"], ["assistant", "stopped"]]);
    assert.equal(stored.messages.at(-1).content, events.at(-1).data.message);
    ws.close();
  });

  test("messages sent mid-answer wait and are answered after it, in order; past four, 409 queue_full", async () => {
    const owner = newOwner();
    const running = await api.post(owner, { message: "The first question" });
    await until(() => running.events.filter((e) => e.event === "text_delta").length >= 2);
    const id = running.id;
    const second = await api.post(owner, { message: "The second question", conversation_id: id });
    await until(() => second.events.length >= 1);
    assert.deepEqual([second.events[0].event, second.events[0].data.message], ["status", "Queued: answered after the current answer..."]);
    assert.ok(Number.isNaN(second.events[0].id), "the queued note has no id to resume from");
    const more = [];
    for (let i = 3; i <= 5; i++) more.push(await api.post(owner, { message: `Question ${i}`, conversation_id: id }));
    const stranger = await api.call("POST", "/api/assistant", { owner: newOwner(), body: { provider: "fake-openai", conversation_id: id, message: "Let me in", context } });
    assert.deepEqual([stranger.status, stranger.json.error.code], [404, "conversation_not_found"], "another owner is not queued");
    const badContext = await api.call("POST", "/api/assistant", { owner, body: { conversation_id: id, message: "x", context: { current_page: 7 } } });
    assert.equal(badContext.status, 422, "a bad context is refused before it waits");
    const elsewhere = await api.call("POST", "/api/assistant", { owner, body: { provider: "nope", conversation_id: id, message: "x", context } });
    assert.deepEqual([elsewhere.status, elsewhere.json.error.code], [422, "unknown_provider"], "so is a provider that is not configured");
    const full = await api.call("POST", "/api/assistant", { owner, body: { provider: "fake-openai", conversation_id: id, message: "One too many", context } });
    assert.deepEqual([full.status, full.json.error.code], [409, "queue_full"]);
    const firstDone = (await running.done).at(-1);
    const secondEvents = await second.done;
    assert.equal(firstDone.event, "complete");
    assert.equal(secondEvents.at(-1).event, "complete");
    assert.ok(secondEvents.filter((e) => e.id).every((e) => e.id > firstDone.id), "its turn came after the first");
    for (const queued of more) assert.equal((await queued.done).at(-1).event, "complete");
    const stored = await api.conversation(owner, id);
    assert.deepEqual(stored.messages.filter((m) => m.role === "user").map((m) => m.content), ["The first question", "The second question", "Question 3", "Question 4", "Question 5"]);
    assert.deepEqual(stored.messages.map((m) => m.role), Array.from({ length: 10 }, (_, i) => (i % 2 ? "assistant" : "user")));
  });

  test("a Stop naming a waiting message stops it alone: out of the line, or its turn once begun; every tab is told the line", async () => {
    const owner = newOwner();
    const running = await api.post(owner, { message: "The first question" });
    await until(() => running.events.filter((e) => e.event === "text_delta").length >= 2);
    const id = running.id;
    assert.equal(running.waiting, null, "a turn that runs at once has no waiting id");
    const tab = watcher(stack, owner, id);
    await tab.opened;
    const second = await api.post(owner, { message: "The second question", conversation_id: id });
    const third = await api.post(owner, { message: "The third question", conversation_id: id });
    assert.match(second.waiting ?? "", /^[0-9a-f]{32}$/, "a waiting message's stream is named");
    assert.notEqual(second.waiting, third.waiting);
    const both = [{ id: second.waiting, content: "The second question", action: false }, { id: third.waiting, content: "The third question", action: false }];
    await until(() => tab.line()?.length === 2);
    assert.deepEqual(tab.line(), both, "a watching tab is told each message queued, in order");
    // A tab that joins (a reload) is told the line after it caught up.
    const reloaded = watcher(stack, owner, id);
    await reloaded.opened;
    reloaded.send({ type: "resume", after: 0 });
    await until(() => reloaded.line());
    assert.deepEqual(reloaded.line(), both);
    const types = reloaded.seen.map((e) => e.type);
    assert.ok(types.indexOf("conversation:caught_up") < types.indexOf("conversation:waiting"), types.join());
    const stop = (body, who = owner) => api.call("POST", `/api/assistant/conversations/${id}/stop`, { owner: who, body });
    // A server action waiting is listed as one (withdrawn, its button is pressed again).
    const action = await fetch(`${stack.base}/api/assistant/actions`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...asOwner(owner) },
      body: JSON.stringify({ conversation_id: id, action: "start_research", label: "Research it", target: "How do EGFR inhibitors lose efficacy?", context }),
    });
    assert.equal(action.status, 200);
    const actionWaits = action.headers.get("x-stepwise-waiting");
    await until(() => tab.line()?.length === 3);
    assert.deepEqual(tab.line()[2], { id: actionWaits, content: "Research it", action: true });
    assert.deepEqual((await stop({ waiting: actionWaits, withdraw: true })).json, { stopped: true });
    assert.match(await action.text(), /event: stopped/);
    await until(() => tab.line()?.length === 2);
    for (const body of [{ waiting: "not an id" }, { waiting: null }, { waiting: 7 }, { turn: 1 }, [second.waiting], [], { withdraw: true }, { waiting: second.waiting, withdraw: "yes" }]) {
      const bad = await stop(body);
      assert.deepEqual([bad.status, bad.json.error.code], [422, "invalid_request"], `${JSON.stringify(body)}: nothing is stopped for it`);
    }
    const stranger = await stop({ waiting: second.waiting }, newOwner());
    assert.equal(stranger.status, 404, "another owner cannot stop it, nor learn it waits");
    const unknown = await stop({ waiting: "0".repeat(32) });
    assert.deepEqual(unknown.json, { stopped: false });
    // Out of the line: its stream ends with `stopped`; the running turn goes on.
    const out = await stop({ waiting: second.waiting, withdraw: true });
    assert.deepEqual([out.status, out.json], [200, { stopped: true }], "a withdrawal takes a waiting message out of the line");
    const secondEvents = await second.done;
    assert.deepEqual(secondEvents.map((e) => e.event), ["status", "stopped"]);
    await until(() => tab.line()?.length === 1);
    assert.deepEqual(tab.line(), both.slice(1), "the tabs are told it left the line");
    assert.deepEqual((await stop({ waiting: second.waiting, withdraw: true })).json, { stopped: true }, "a withdrawal sent again (its answer lost) answers the same");
    assert.equal(running.events.at(-1)?.event === "stopped", false);
    // Once its turn has begun, a withdrawal leaves it to run; a Stop stops that turn.
    await until(() => third.events.some((e) => e.event === "text_delta"));
    assert.deepEqual((await stop({ waiting: third.waiting, withdraw: true })).json, { stopped: false }, "a withdrawal takes only a message still waiting");
    assert.deepEqual(tab.line(), [], "its turn began: the line is empty");
    assert.equal((await running.done).at(-1).event, "complete", "the first turn was not stopped");
    const begun = await stop({ waiting: third.waiting });
    assert.deepEqual(begun.json, { stopped: true });
    assert.equal((await third.done).at(-1).event, "stopped");
    const stored = await api.conversation(owner, id);
    assert.deepEqual(stored.messages.map((m) => [m.role, m.content.slice(0, 20), m.status ?? null]).filter((m) => m[0] === "user"),
      [["user", "The first question", null], ["user", "The third question", null]], "the stopped waiting message was never stored");
    assert.equal(stored.messages.at(-1).status, "stopped");
    tab.close();
    reloaded.close();
  });

  test("joining with no turn to join is 204; another owner's conversation is 404", async () => {
    const owner = newOwner();
    const missing = await api.join(owner, "0".repeat(32));
    assert.equal(missing.status, 404);
    const done = await api.post(owner, { message: "Short one" });
    const events = await done.done;
    const stranger = await api.join(newOwner(), done.id);
    assert.equal(stranger.status, 404);
    const late = await api.join(owner, done.id, events.at(-1).id);
    assert.equal(late.status, 200, late.text);
    assert.deepEqual(await late.done, [], "nothing after the last event");
    const missed = await api.join(owner, done.id, events.at(-3).id);
    assert.deepEqual((await missed.done).map((e) => e.id), events.slice(-2).map((e) => e.id), "the last two again");
  });

  test("a turn that failed while another began after it is still joined by its number: its events end with its error, not the next turn's", async () => {
    const owner = newOwner();
    const fails = (request) => JSON.stringify(request.body?.messages ?? []).includes("This one fails") ? { status: 500 } : paced(request);
    stack.fake.script(fails);
    try {
      const running = await api.post(owner, { message: "The first question" });
      await until(() => running.events.some((e) => e.event === "text_delta"));
      const failing = await api.post(owner, { message: "This one fails", conversation_id: running.id });
      const next = await api.post(owner, { message: "The third question", conversation_id: running.id });
      const failedEvents = await failing.done;
      assert.equal(failedEvents.at(-1).event, "error");
      const lease = Math.floor(failedEvents.at(-1).id / 1_000_000);
      await until(() => next.events.some((e) => e.event === "text_delta"));
      // A tab that sent the failing message and reloaded since asks for its turn from the start.
      const joined = await api.join(owner, running.id, lease * 1_000_000);
      assert.equal(joined.status, 200, joined.text);
      const events = await joined.done;
      assert.ok(events.every((e) => Math.floor(e.id / 1_000_000) === lease), "only that turn's events");
      assert.deepEqual(events.map((e) => e.id), failedEvents.filter((e) => e.id).map((e) => e.id), "the whole turn, once");
      assert.deepEqual([events.at(-1).event, events.at(-1).data.code], ["error", "upstream_error"]);
      // A number of no kept turn (past the few kept) joins the running one, as before.
      const running3 = await api.join(owner, running.id, 999_000_000);
      assert.equal(running3.status, 200);
      const third = await running3.done;
      assert.ok(third.length > 0 && third.every((e) => Math.floor(e.id / 1_000_000) === lease + 1), "the running turn's events");
      assert.equal((await next.done).at(-1).event, "complete");
    } finally {
      stack.fake.script(paced);
    }
  });
});

describe("turns that outlive their Worker, and requests that do not stick", () => {
  test("a Worker restarted mid-turn: the conversation shows the interrupted answer and answers a new message", async () => {
    const state = mkdtempSync(join(tmpdir(), "stepwise-live-"));
    const owner = newOwner();
    let id;
    let partial;
    const first = await startStack({ persist: state, providers });
    try {
      first.fake.script(paced);
      const api = live(first);
      const opened = await api.post(owner, { message: "Warm up" });
      id = opened.id;
      await opened.done;
      const running = await api.post(owner, { message: "A long answer, please", conversation_id: id });
      await until(() => running.events.filter((e) => e.event === "text_delta").length >= 8);
      partial = shown(running.events);
    } finally {
      await first.stop();
    }
    const second = await startStack({ persist: state, providers });
    try {
      second.fake.script(() => ({ reply: "Answered after the restart." }));
      const api = live(second);
      const record = await api.conversation(owner, id);
      assert.equal(record.running, false);
      const [question, answer] = record.messages.slice(2);
      assert.deepEqual([question.role, question.content], ["user", "A long answer, please"]);
      assert.deepEqual([answer.role, answer.status], ["assistant", "interrupted"]);
      assert.ok(answer.content.length > 0 && partial.startsWith(answer.content), `${answer.content} / ${partial}`);
      const next = await api.post(owner, { message: "Try again", conversation_id: id });
      const events = await next.done;
      assert.equal(events.at(-1).event, "complete");
      assert.equal(events.at(-1).data.payload.message, "Answered after the restart.");
    } finally {
      await second.stop();
      rmSync(state, { recursive: true, force: true });
    }
  });

  test("a waiting message's turn is told to every tab with the id it waited under; one whose model call is refused (the owner's daily calls used up meanwhile) ends with the error and keeps nothing", async () => {
    const stack = await startStack({ providers, overrides: { MODEL_CALLS_PER_OWNER_PER_DAY: "1" } });
    try {
      stack.fake.script(paced);
      const api = live(stack);
      const owner = newOwner();
      const running = await api.post(owner, { message: "The only call today" });
      await until(() => running.events.some((e) => e.event === "text_delta"));
      const tab = watcher(stack, owner, running.id);
      await tab.opened;
      const waiting = await api.post(owner, { message: "One too many", conversation_id: running.id });
      assert.match(waiting.waiting ?? "", /^[0-9a-f]{32}$/);
      await until(() => tab.line()?.length === 1);
      const events = await waiting.done;
      assert.deepEqual([events.at(-1).event, events.at(-1).data.code], ["error", "quota_exceeded"], "its own stream says why");
      const started = await until(() => tab.seen.find((e) => e.type === "conversation:turn_started" && e.message?.content === "One too many"));
      assert.equal(started.waiting_id, waiting.waiting, "a tab reloaded since knows the turn as its own message's");
      const failed = await until(() => tab.seen.find((e) => e.type === "conversation:turn_event" && e.event.type === "error"));
      assert.equal(Math.floor(failed.seq / 1_000_000), started.lease);
      assert.equal(failed.event.code, "quota_exceeded");
      assert.deepEqual(tab.line(), [], "out of the line");
      await running.done;
      const stored = await api.conversation(owner, running.id);
      assert.deepEqual(stored.messages.map((m) => m.content), ["The only call today", REPLY], "nothing of it kept");
      tab.close();
    } finally {
      await stack.stop();
    }
  });

  test("a resumed context request whose model call fails waits again: asked again with nothing (on what was kept) or the same supply, it answers; ASSISTANT_QUEUE=false refuses a message mid-answer", async () => {
    const stack = await startStack({ providers, overrides: { ASSISTANT_QUEUE: "false" } });
    try {
      let failing = false;
      stack.fake.script((request) => {
        if (JSON.stringify(request.body).includes("Take your time")) return { reply: REPLY, paced: true, delayMs: DELAY_MS };
        return failing ? { status: 500, message: "upstream broke" } : { reply: "Compared with your note." };
      });
      const api = live(stack);
      const slow = await api.post(newOwner(), { message: "Take your time" });
      await until(() => slow.events.some((e) => e.event === "text_delta"));
      const refused = await api.call("POST", "/api/assistant", { owner: slow.owner, body: { provider: "fake-openai", conversation_id: slow.id, message: "Meanwhile", context } });
      assert.deepEqual([refused.status, refused.json.error.code], [409, "turn_in_progress"]);
      await slow.done;
      const owner = newOwner();
      const json = { accept: "application/json" };
      const deferred = await api.call("POST", "/api/assistant", { owner, headers: json, body: { provider: "fake-openai", message: "Compare this with my notes", context } });
      assert.equal(deferred.json.status, "context_required", deferred.text);
      const { conversation_id: id, request_id: requestId } = deferred.json;
      const slot = deferred.json.required.find((s) => s.artifact_type === "note").slot;
      const supply = { conversation_id: id, request_id: requestId, payloads: [{ slot, text: "My note: dosing matters most." }] };
      const bare = { conversation_id: id, request_id: requestId };
      const early = await api.call("POST", "/api/assistant/context-supply", { owner, body: bare });
      assert.deepEqual([early.status, early.json.error.code], [422, "invalid_request"], "nothing supplied, nothing to run");
      failing = true;
      const failed = await api.call("POST", "/api/assistant/context-supply", { owner, body: supply });
      assert.deepEqual([failed.status, failed.json.error.code], [502, "upstream_error"]);
      const waiting = await api.conversation(owner, id);
      assert.equal(waiting.waiting, requestId, "the message still waits");
      assert.equal(waiting.context_requests[0].status, "open", "and so does its request");
      assert.equal(waiting.interrupts[0].state, "open", "an interrupt open again");
      // Asked again with neither payloads nor skips (a client that no longer holds the note): it
      // runs on what was kept; before its slots were met, that was refused.
      const again = await api.call("POST", "/api/assistant/context-supply", { owner, body: bare });
      assert.deepEqual([again.status, again.json.error.code], [502, "upstream_error"], "run again on the note kept");
      failing = false;
      const answered = await api.call("POST", "/api/assistant/context-supply", { owner, body: supply });
      assert.equal(answered.status, 200, answered.text);
      assert.equal(answered.json.status, "answered");
      assert.equal(answered.json.answer.message, "Compared with your note.");
      const done = await api.conversation(owner, id);
      assert.deepEqual([done.waiting, done.messages.map((m) => m.status ?? null)], [null, ["answered", null]]);
    } finally {
      await stack.stop();
    }
  });
});

// End-to-end tests of live guided-chat turns under `wrangler dev`: a guided turn runs on its
// conversation's Durable Object whether or not anyone reads it; a client that drops (or reloads
// during its first turn) joins again with `Last-Event-ID` and the conversation's token and gets
// the rest exactly once; Stop aborts the provider's call and keeps the answer so far marked
// `stopped`; a Worker restarted mid-turn leaves it `interrupted` and the conversation takes its
// next turn; a waiting message whose turn cannot begin is told to every tab. The fake provider paces its deltas so turns last.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiCaller, asOwner, fakeProvider, newOwner, readEvents, shownText, startStack, until } from "./harness.mjs";

/** A reply of many short lines with no markers, streamed one provider event every `DELAY_MS`. */
const REPLY = Array.from({ length: 24 }, (_, i) => `Line ${i + 1} of a long, paced answer.`).join("\n");
const DELAY_MS = 80;
const providers = (url) => [fakeProvider(url, "fake-openai", "openai"), { name: "offline", kind: "offline" }];
const paced = () => ({ reply: REPLY, paced: true, delayMs: DELAY_MS });

function guided(stack) {
  const call = apiCaller(() => stack.base);
  /** Posts a streamed guided turn (continuing `from`, a turn's `{id, token, turns}`), with the
   * request's fields `extra` too. */
  async function post(owner, message, from, extra = {}) {
    const controller = new AbortController();
    const body = { provider: "fake-openai", message, current_config: {}, ...(from ? { conversation_id: from.id, turns: from.turns } : {}), ...extra };
    const response = await fetch(`${stack.base}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", ...asOwner(owner), ...(from ? { "x-conversation-token": from.token } : {}) },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    const headers = response.headers;
    if (response.status !== 200) return { status: response.status, json: await response.json() };
    const id = headers.get("x-stepwise-conversation");
    const token = headers.get("x-conversation-token") ?? from?.token;
    const waiting = headers.get("x-stepwise-waiting");
    return { status: 200, ...readEvents(response), owner, id, token, waiting, abort: () => controller.abort() };
  }
  /** Joins conversation `id`'s turn after `lastEventId`, with `token`. */
  async function join(owner, id, token, lastEventId) {
    const headers = { ...asOwner(owner), "x-conversation-token": token, ...(lastEventId ? { "last-event-id": String(lastEventId) } : {}) };
    const response = await fetch(`${stack.base}/api/conversations/${id}/stream`, { headers });
    if (response.status === 200) return { status: 200, ...readEvents(response) };
    return { status: response.status, text: await response.text(), done: Promise.resolve([]) };
  }
  const stop = (owner, id, token, body) => call("POST", `/api/conversations/${id}/stop`, { owner, headers: token ? { "x-conversation-token": token } : {}, body });
  const snapshot = async (owner, id, token) => (await call("GET", `/api/conversations/${id}`, { owner, headers: { "x-conversation-token": token } })).json;
  const calls = (since) => stack.fake.requests.filter((r) => r.at >= since);
  /** A finished first turn: `{id, token, turns}`. */
  async function opened(owner) {
    const first = await post(owner, "Track rivals");
    const done = (await first.done).at(-1);
    assert.equal(done.event, "complete");
    return { id: first.id, token: first.token, turns: done.data.payload.turns };
  }
  return { call, post, join, stop, snapshot, calls, opened };
}

describe("live guided turns", () => {
  let stack;
  let api;
  before(async () => {
    stack = await startStack({ providers });
    stack.fake.script(paced);
    api = guided(stack);
  });
  after(() => stack?.stop());

  test("a client that drops after three deltas rejoins with Last-Event-ID and its token, and gets the rest once, in order; the provider was called once", async () => {
    const owner = newOwner();
    const reference = await (await api.post(owner, "Tell me everything")).done;
    assert.equal(reference.at(-1).event, "complete");
    const from = await api.opened(owner);
    const since = Date.now();
    const first = await api.post(owner, "Tell me everything again", from);
    await until(() => first.events.filter((e) => e.event === "text_delta").length >= 3);
    first.abort();
    const seen = first.events.slice();
    const last = seen.at(-1).id;
    await new Promise((r) => setTimeout(r, 4 * DELAY_MS));
    const stranger = await api.join(newOwner(), from.id, from.token, last);
    assert.equal(stranger.status, 404, "another owner cannot see it exists");
    const noToken = await api.join(owner, from.id, "0".repeat(32), last);
    assert.equal(noToken.status, 403, "nor can the owner without its token");
    const rest = await api.join(owner, from.id, from.token, last);
    assert.equal(rest.status, 200, rest.text);
    // A join naming an event the turn has not reached yet gets only the events after it.
    const ahead = await api.join(owner, from.id, from.token, last + 10);
    assert.equal(ahead.status, 200, ahead.text);
    const resumed = await rest.done;
    const afterAhead = await ahead.done;
    assert.deepEqual(afterAhead.map((e) => e.id), resumed.filter((e) => e.id > last + 10).map((e) => e.id), "only the events after the one named");
    assert.ok(resumed.length > 0 && resumed.every((e) => e.id > last), "only later events");
    const ids = [...seen, ...resumed].map((e) => e.id);
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), "each event once, in order");
    assert.equal(resumed.at(-1).event, "complete");
    assert.equal(shownText(seen) + shownText(resumed), shownText(reference), "the same text as an undisturbed client");
    assert.equal(api.calls(since).length, 1, "one model call");
    const stored = await api.snapshot(owner, from.id, from.token);
    assert.equal(stored.turns, 2);
    assert.deepEqual(stored.conversation_history.slice(-2).map((m) => [m.role, m.content, m.status ?? null]), [
      ["user", "Tell me everything again", null],
      ["assistant", resumed.at(-1).data.payload.message, null],
    ]);
  });

  test("a first turn's response names its conversation and token at once: a reload joins it from the start", async () => {
    const owner = newOwner();
    const first = await api.post(owner, "Start me up");
    assert.match(first.id, /^[0-9a-f]{32}$/);
    assert.match(first.token, /^[0-9a-f]{32}$/);
    await until(() => first.events.some((e) => e.event === "text_delta"));
    first.abort();
    const reloaded = await api.join(owner, first.id, first.token);
    assert.equal(reloaded.status, 200, reloaded.text);
    const events = await reloaded.done;
    assert.equal(events.at(-1).event, "complete");
    assert.equal(events.at(-1).data.payload.conversation_token, first.token);
    assert.equal(shownText(events), REPLY);
    const stored = await api.snapshot(owner, first.id, first.token);
    assert.equal(stored.turns, 1);
    const late = await api.join(owner, first.id, first.token, events.at(-1).id);
    assert.deepEqual([late.status, await late.done], [200, []], "nothing after the last event");
    // The assistant's routes never reach a guided conversation.
    const crossed = await api.call("GET", `/api/assistant/conversations/${first.id}/stream`, { owner, headers: { "x-conversation-token": first.token } });
    assert.equal(crossed.status, 404);
    const crossedStop = await api.call("POST", `/api/assistant/conversations/${first.id}/stop`, { owner, body: {} });
    assert.equal(crossedStop.status, 404);
  });

  test("Stop aborts the provider's call, keeps the answer so far marked stopped, and ends every client's stream; a message mid-answer is 409", async () => {
    const owner = newOwner();
    const from = await api.opened(owner);
    const since = Date.now();
    const running = await api.post(owner, "A long answer, please", from);
    await until(() => running.events.filter((e) => e.event === "text_delta").length >= 3);
    const watcher = await api.join(owner, from.id, from.token);
    assert.equal(watcher.status, 200, watcher.text);
    // A JSON message cannot wait: it is refused while a turn runs.
    const meanwhile = await api.call("POST", "/api/chat", {
      owner,
      headers: { accept: "application/json", "x-conversation-token": from.token },
      body: { provider: "fake-openai", message: "Meanwhile", current_config: {}, conversation_id: from.id, turns: from.turns },
    });
    assert.deepEqual([meanwhile.status, meanwhile.json.error.code], [409, "turn_in_progress"]);
    const other = await api.stop(newOwner(), from.id, from.token);
    assert.deepEqual([other.status, other.json.error.code], [404, "conversation_not_found"]);
    const tokenless = await api.stop(owner, from.id);
    assert.equal(tokenless.status, 403);
    const stop = await api.stop(owner, from.id, from.token);
    assert.deepEqual([stop.status, stop.json], [200, { stopped: true }]);
    const [mine, theirs] = await Promise.all([running.done, watcher.done]);
    for (const events of [mine, theirs]) {
      assert.equal(events.at(-1).event, "stopped");
      assert.ok(!events.some((e) => e.event === "complete"));
    }
    const partial = mine.at(-1).data.message;
    assert.equal(partial, shownText(mine));
    assert.ok(partial.length > 0 && partial.length < REPLY.length, partial);
    assert.ok(await until(() => api.calls(since)[0]?.closedEarly), "the provider saw its connection closed");
    const stored = await api.snapshot(owner, from.id, from.token);
    assert.equal(stored.turns, from.turns + 1, "the stopped answer is a turn");
    assert.deepEqual(stored.conversation_history.slice(-2).map((m) => [m.role, m.content, m.status ?? null]), [
      ["user", "A long answer, please", null],
      ["assistant", partial, "stopped"],
    ]);
    assert.deepEqual((await api.stop(owner, from.id, from.token)).json, { stopped: false }, "nothing runs any more");
    const next = await api.post(owner, "Next question", { ...from, turns: stored.turns });
    assert.equal((await next.done).at(-1).event, "complete", "the conversation takes its next turn");
  });

  test("a client that drops while the provider's answer arrives in bursts: the turn still ends and is saved whole", async () => {
    const owner = newOwner();
    const from = await api.opened(owner);
    const reply = "A burst of an answer, ".repeat(10).trim();
    const since = Date.now();
    // Eight SSE events a write, 60 ms apart: several deltas reach the object in one read.
    stack.fake.script({ reply, paced: true, perWrite: 8, delayMs: 60 });
    try {
      const running = await api.post(owner, "All at once, please", from);
      await until(() => running.events.some((e) => e.event === "text_delta"));
      running.abort();
      assert.ok(await until(async () => (await api.snapshot(owner, from.id, from.token)).turns === from.turns + 1, 20000), "the turn was saved");
      const stored = await api.snapshot(owner, from.id, from.token);
      const answer = stored.conversation_history.at(-1);
      assert.deepEqual([answer.role, answer.content, answer.status ?? null], ["assistant", reply, null]);
      assert.equal(api.calls(since).length, 1, "one model call");
      assert.equal(api.calls(since)[0].closedEarly, null, "the provider's answer was read to its end");
    } finally {
      stack.fake.script(paced);
    }
  });

  test("a streamed message sent while an answer streams waits and is answered right after it, in order", async () => {
    const owner = newOwner();
    const from = await api.opened(owner);
    const since = Date.now();
    const first = await api.post(owner, "A long answer, please", from);
    await until(() => first.events.filter((e) => e.event === "text_delta").length >= 3);
    // A stale count of turns is refused now; the right one waits.
    const stale = await api.post(owner, "Stale", { ...from, turns: from.turns - 1 });
    assert.deepEqual([stale.status, stale.json.error.code], [409, "stale_turn"]);
    // So is what its turn would be refused for when it begins, as when nothing runs.
    const tooLong = await api.post(owner, "x".repeat(8001), from);
    assert.deepEqual([tooLong.status, tooLong.json.error.code], [422, "message_too_long"]);
    const elsewhere = await api.post(owner, "Elsewhere", from, { provider: "nope" });
    assert.deepEqual([elsewhere.status, elsewhere.json.error.code], [422, "unknown_provider"]);
    const unknownFlow = await api.post(owner, "Another flow", from, { workflow: "no_such_flow" });
    assert.deepEqual([unknownFlow.status, unknownFlow.json.error.code], [404, "unknown_workflow"]);
    const second = await api.post(owner, "And then this", from);
    assert.equal(second.status, 200);
    await until(() => second.events.length > 0);
    assert.deepEqual([second.events[0].event, second.events[0].data.message], ["status", "Queued: answered after the current answer..."]);
    const [a, b] = await Promise.all([first.done, second.done]);
    assert.equal(a.at(-1).event, "complete");
    assert.equal(b.at(-1).event, "complete");
    assert.equal(b.at(-1).data.payload.turns, from.turns + 2, "the second builds on the first");
    const calls = api.calls(since);
    assert.equal(calls.length, 2);
    const read = calls[1].body.messages;
    assert.ok(read.some((m) => m.role === "assistant" && m.content.includes("Line 24")), "the second call read the first answer, whole");
    assert.equal(read.at(-1).content, "And then this");
    const users = (await api.snapshot(owner, from.id, from.token)).conversation_history.filter((m) => m.role === "user").map((m) => m.content);
    assert.deepEqual(users.slice(-2), ["A long answer, please", "And then this"], "both turns are stored, in order");
    // A waiting message stopped by its id leaves the line; the running turn goes on.
    const third = await api.post(owner, "Longer again", { ...from, turns: from.turns + 2 });
    await until(() => third.events.some((e) => e.event === "text_delta"));
    // A tab watching the conversation is told the line (with its token; a reload, on joining).
    const ws = new WebSocket(`${stack.base.replace("http", "ws")}/api/conversations/${from.id}/ws`, ["stepwise.v1", `bearer.${owner}`, `token.${from.token}`]);
    const seen = [];
    ws.addEventListener("message", (event) => seen.push(JSON.parse(event.data)));
    await new Promise((resolve) => ws.addEventListener("open", resolve, { once: true }));
    const line = () => seen.findLast((e) => e.type === "conversation:waiting")?.messages;
    ws.send(JSON.stringify({ type: "resume", after: 0 }));
    await until(() => line());
    assert.deepEqual(line(), [], "nothing waits yet");
    const fourth = await api.post(owner, "Never mind", { ...from, turns: from.turns + 2 });
    assert.match(fourth.waiting ?? "", /^[0-9a-f]{32}$/);
    await until(() => line()?.length === 1);
    assert.deepEqual(line(), [{ id: fourth.waiting, content: "Never mind", action: false }]);
    const refused = await api.stop(owner, from.id, undefined, { waiting: fourth.waiting });
    assert.equal(refused.status, 403, "a guided Stop needs the conversation's token");
    const stopped = await api.stop(owner, from.id, from.token, { waiting: fourth.waiting });
    assert.deepEqual(stopped.json, { stopped: true });
    assert.deepEqual((await fourth.done).map((e) => e.event), ["status", "stopped"]);
    await until(() => line()?.length === 0);
    ws.close();
    assert.equal((await third.done).at(-1).event, "complete");
    const stored = await api.snapshot(owner, from.id, from.token);
    assert.equal(stored.turns, from.turns + 3);
    assert.deepEqual(stored.conversation_history.slice(-6).map((m) => (m.role === "user" ? `user: ${m.content}` : m.role)), [
      "user: A long answer, please",
      "assistant",
      "user: And then this",
      "assistant",
      "user: Longer again",
      "assistant",
    ]);
  });

  test("a message sent while a new conversation's first turn streams waits behind it (turns 0, its token), and builds on it", async () => {
    const owner = newOwner();
    const first = await api.post(owner, "Track rivals, in detail");
    await until(() => first.events.some((e) => e.event === "text_delta"));
    const from = { id: first.id, token: first.token, turns: 0 };
    // Nothing is stored yet: a stranger, a wrong token or a count other than 0 are refused.
    const stranger = await api.post(newOwner(), "Mine now", from);
    assert.deepEqual([stranger.status, stranger.json.error.code], [404, "conversation_not_found"]);
    const wrongToken = await api.post(owner, "Mine now", { ...from, token: newOwner() });
    assert.deepEqual([wrongToken.status, wrongToken.json.error.code], [404, "conversation_not_found"]);
    const stale = await api.post(owner, "Stale", { ...from, turns: 1 });
    assert.deepEqual([stale.status, stale.json.error.code], [409, "stale_turn"]);
    const second = await api.post(owner, "And launches", from);
    assert.equal(second.status, 200, JSON.stringify(second.json));
    assert.match(second.waiting ?? "", /^[0-9a-f]{32}$/);
    const [a, b] = await Promise.all([first.done, second.done]);
    assert.equal(a.at(-1).event, "complete");
    assert.equal(b.at(-1).event, "complete");
    assert.equal(b.at(-1).data.payload.turns, 2, "the second builds on the first");
    const stored = await api.snapshot(owner, first.id, first.token);
    assert.deepEqual(stored.conversation_history.filter((m) => m.role === "user").map((m) => m.content), ["Track rivals, in detail", "And launches"]);
  });

  test("a message waiting behind a first turn that fails begins the conversation itself, under the id and token that turn was given", async () => {
    const owner = newOwner();
    const doomed = (request) => JSON.stringify(request.body?.messages ?? []).includes("Doomed");
    stack.fake.script((request) => (doomed(request) ? { status: 500, latencyMs: 1500 } : paced()));
    try {
      const first = await api.post(owner, "Doomed first message");
      await until(() => first.events.some((e) => e.event === "status"));
      const second = await api.post(owner, "Track rivals", { id: first.id, token: first.token, turns: 0 });
      assert.equal(second.status, 200, JSON.stringify(second.json));
      assert.match(second.waiting ?? "", /^[0-9a-f]{32}$/);
      const [a, b] = await Promise.all([first.done, second.done]);
      assert.equal(a.at(-1).event, "error");
      assert.equal(b.at(-1).event, "complete", JSON.stringify(b.at(-1)));
      assert.deepEqual([b.at(-1).data.payload.conversation_id, b.at(-1).data.payload.turns], [first.id, 1], "the conversation's first turn");
      const stored = await api.snapshot(owner, first.id, first.token);
      assert.deepEqual(stored.conversation_history.map((m) => m.role === "user" ? m.content : m.role), ["Track rivals", "assistant"]);
      // It takes its next turn as any conversation does.
      const third = await api.post(owner, "And launches", { id: first.id, token: first.token, turns: 1 });
      assert.equal((await third.done).at(-1).data.payload.turns, 2);
    } finally {
      stack.fake.script(paced);
    }
  });
});

describe("guided turns that outlive their Worker", () => {
  test("a Worker restarted mid-turn: the conversation shows the interrupted answer and takes its next turn", async () => {
    const state = mkdtempSync(join(tmpdir(), "stepwise-guided-live-"));
    const owner = newOwner();
    let from;
    let partial;
    const first = await startStack({ persist: state, providers });
    try {
      first.fake.script(paced);
      const api = guided(first);
      from = await api.opened(owner);
      const running = await api.post(owner, "A long answer, please", from);
      await until(() => running.events.filter((e) => e.event === "text_delta").length >= 8);
      partial = shownText(running.events);
    } finally {
      await first.stop();
    }
    const second = await startStack({ persist: state, providers });
    try {
      second.fake.script(() => ({ reply: "Answered after the restart." }));
      const api = guided(second);
      const stored = await api.snapshot(owner, from.id, from.token);
      assert.equal(stored.turns, from.turns + 1);
      const [question, answer] = stored.conversation_history.slice(-2);
      assert.deepEqual([question.role, question.content], ["user", "A long answer, please"]);
      assert.deepEqual([answer.role, answer.status], ["assistant", "interrupted"]);
      assert.ok(answer.content.length > 0 && partial.startsWith(answer.content), `${answer.content} / ${partial}`);
      const next = await api.post(owner, "Try again", { ...from, turns: stored.turns });
      const events = await next.done;
      assert.equal(events.at(-1).event, "complete");
      assert.equal(events.at(-1).data.payload.message, "Answered after the restart.");
    } finally {
      await second.stop();
      rmSync(state, { recursive: true, force: true });
    }
  });
});

describe("a guided message whose turn cannot begin", () => {
  test("the owner's daily calls used up while it waited: its stream ends with the error, every tab is told by its waiting id, and nothing of it is kept", async () => {
    // Two model calls a day for each owner: the first turn's, and the answer the message waits for.
    const stack = await startStack({ providers, overrides: { MODEL_CALLS_PER_OWNER_PER_DAY: "2" } });
    try {
      stack.fake.script(paced);
      const api = guided(stack);
      const owner = newOwner();
      const from = await api.opened(owner);
      const ws = new WebSocket(`${stack.base.replace("http", "ws")}/api/conversations/${from.id}/ws`, ["stepwise.v1", `bearer.${owner}`, `token.${from.token}`]);
      const seen = [];
      ws.addEventListener("message", (event) => seen.push(JSON.parse(event.data)));
      await new Promise((resolve, reject) => (ws.addEventListener("open", resolve, { once: true }), ws.addEventListener("error", reject, { once: true })));
      const running = await api.post(owner, "A long answer, please", from);
      await until(() => running.events.some((e) => e.event === "text_delta"));
      const waiting = await api.post(owner, "Over the cap", from);
      assert.match(waiting.waiting ?? "", /^[0-9a-f]{32}$/);
      const events = await waiting.done;
      assert.deepEqual([events.at(-1).event, events.at(-1).data.code], ["error", "quota_exceeded"], "its own stream says why");
      const told = await until(() => seen.find((e) => e.type === "conversation:not_begun"));
      assert.deepEqual([told.conversation_id, told.waiting_id, told.code, told.message], [from.id, waiting.waiting, "quota_exceeded", events.at(-1).data.message]);
      assert.deepEqual(seen.findLast((e) => e.type === "conversation:waiting")?.messages, [], "out of the line");
      assert.equal((await running.done).at(-1).event, "complete", "the answer it waited for is not touched");
      const stored = await api.snapshot(owner, from.id, from.token);
      assert.equal(stored.turns, from.turns + 1, "nothing of it kept");
      assert.ok(!stored.conversation_history.some((m) => m.content === "Over the cap"));
      ws.close();
    } finally {
      await stack.stop();
    }
  });
});

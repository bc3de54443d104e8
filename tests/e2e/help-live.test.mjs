// End-to-end tests of live help-desk turns under `wrangler dev` (the starter knowledge base): a
// turn run by its session's object goes on when its client goes away, is joined after the last
// event seen, and is given up by Stop; a question sent while the desk answers waits in the
// session's line, which every watching tab is told, and can be withdrawn; with HELP_QUEUE=false it
// is refused; every tab of a session is told when a turn begins elsewhere; a turn that ended while
// the next began is still joined whole by its number.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { ADMIN_TOKEN, apiCaller, asOwner, generousLimits, newOwner, readEvents, startStack, until } from "./harness.mjs";

let stack;
before(async () => {
  stack = await startStack({ config: generousLimits });
});
after(async () => {
  await stack?.stop();
});

const call = apiCaller(() => stack.base);

/** Asks `message` (in session `sessionId`, else a new one) for its JSON answer. */
async function ask(owner, message, sessionId) {
  const { status, json } = await call("POST", "/api/help", { owner, body: sessionId ? { session_id: sessionId, message } : { message } });
  assert.equal(status, 200, JSON.stringify(json));
  return json;
}

describe("live help-desk turns", () => {
  const QUESTION = "Why are answers slow or stop midway?";
  // The same article, asked in other words: not answered from the owner's cache.
  const AGAIN = ["Answers stop midway and are slow, why?", "Why do answers stop midway and get slow?"];
  const SLOW_ANSWER = "A slow, whole answer.";
  /** The desk's generation streams `reply` one event each `ms` (translation at once): slow, yet
   * never idle for the provider timeout. */
  const slowModel = (ms, reply = SLOW_ANSWER) =>
    stack.fake.script((request) => (request.system.startsWith("Translate") ? { reply: "[de]" } : { reply, paced: true, delayMs: ms }));
  const LONG_ANSWER = "A long answer, written slowly, one small piece at a time. ".repeat(4).trim();
  const streamed = async (owner, body) => {
    const response = await fetch(`${stack.base}/api/help`, {
      method: "POST",
      headers: { ...asOwner(owner), "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    const controller = { abort: () => response.body.cancel().catch(() => {}) };
    return { status: response.status, session: response.headers.get("x-stepwise-session"), waiting: response.headers.get("x-stepwise-waiting"), ...(response.status === 200 ? readEvents(response) : { events: [], done: Promise.resolve([]) }), ...controller };
  };
  /** A new owner's session, answered once, whose second question's answer is being written
   * slowly now (`running`; `since`: when it was asked). */
  const answering = async () => {
    slowModel(0);
    const owner = newOwner();
    const id = (await ask(owner, QUESTION)).session_id;
    slowModel(150);
    const since = Date.now();
    return { owner, id, since, running: await streamed(owner, { session_id: id, message: AGAIN[0] }) };
  };
  const join = (owner, id, after) =>
    fetch(`${stack.base}/api/help/sessions/${id}/stream`, { headers: { ...asOwner(owner), ...(after ? { "last-event-id": String(after) } : {}) } });

  test("a turn goes on when its client goes away: a join after the last event seen gets the rest once, and the answer is kept", async () => {
    slowModel(250);
    const owner = newOwner();
    const since = Date.now();
    const running = await streamed(owner, { message: QUESTION });
    assert.equal(running.status, 200);
    assert.match(running.session, /^[0-9a-f]{32}$/);
    await until(() => running.events.some((e) => e.data.type === "status" && /Writing/.test(e.data.message)));
    const seen = running.events.at(-1).id;
    running.abort();
    // Joins: another owner's is 404, the owner's gets the events after the one seen.
    assert.equal((await join(newOwner(), running.session)).status, 404);
    // A reload naming a turn the session no longer keeps (or none begun yet) joins the running one whole.
    const elsewhere = await join(owner, running.session, 5_000_001);
    assert.equal(elsewhere.status, 200, "the running turn, for another turn's event");
    const fromStart = readEvents(elsewhere).done;
    const joined = await join(owner, running.session, seen);
    assert.equal(joined.status, 200);
    const rest = await readEvents(joined).done;
    assert.deepEqual(rest.map((e) => e.id), rest.map((_, i) => seen + 1 + i), "every later event once, in order");
    assert.equal(rest.at(-1).event, "complete");
    assert.equal(rest.at(-1).data.payload.reply, SLOW_ANSWER);
    const whole = await fromStart;
    assert.deepEqual(whole.map((e) => e.id), whole.map((_, i) => 1_000_001 + i), "from its first event, once, in order");
    assert.equal(whole.at(-1).event, "complete");
    const session = (await call("GET", `/api/help/sessions/${running.session}`, { owner })).json;
    assert.equal(session.turns, 1);
    assert.deepEqual(session.messages.map((m) => m.role), ["user", "desk"]);
    const generations = stack.fake.requests.filter((r) => r.at >= since && r.kind && !r.system.startsWith("Translate"));
    assert.equal(generations.length, 1, "one model call");
    assert.equal(generations[0].closedEarly, null, "the model call was read to its end");
    // After the turn: a client that saw its start gets the rest again; one that did not (a
    // reload) is told there is nothing to join, since the session holds it.
    assert.equal((await readEvents(await join(owner, running.session, seen)).done).at(-1).event, "complete");
    assert.equal((await join(owner, running.session)).status, 204);
    assert.equal((await join(owner, running.session, 5_000_001)).status, 204, "another turn's event");
    // A tab told the turn began (`after`: its number alone) gets it whole, even once it ended.
    const named = await readEvents(await join(owner, running.session, 1_000_000)).done;
    assert.deepEqual(named, whole);
    assert.equal(named.length, seen - 1_000_000 + rest.length, "every event of it");
  });

  test("a JSON turn whose client goes away is answered and kept all the same", async () => {
    slowModel(0);
    const owner = newOwner();
    const id = (await ask(owner, QUESTION)).session_id;
    slowModel(250);
    const before = (await call("GET", `/api/help/sessions/${id}`, { owner })).json;
    const since = Date.now();
    const leaving = new AbortController();
    const asked = fetch(`${stack.base}/api/help`, {
      method: "POST",
      headers: { ...asOwner(owner), "content-type": "application/json" },
      body: JSON.stringify({ session_id: id, message: AGAIN[0] }),
      signal: leaving.signal,
    }).catch(() => null);
    await until(() => stack.fake.requests.some((r) => r.at >= since && r.kind && !r.system.startsWith("Translate")));
    leaving.abort();
    await asked;
    const kept = await until(async () => {
      const session = (await call("GET", `/api/help/sessions/${id}`, { owner })).json;
      return session.turns === before.turns + 1 && session;
    }, 15000);
    assert.equal(kept.messages.at(-1).text, SLOW_ANSWER);
  });

  test("Stop gives a running turn up: its stream ends with stopped, the model call is closed, nothing is kept", async () => {
    slowModel(0);
    const owner = newOwner();
    const id = (await ask(owner, QUESTION)).session_id;
    slowModel(300, LONG_ANSWER);
    const before = (await call("GET", `/api/help/sessions/${id}`, { owner })).json;
    const since = Date.now();
    const running = await streamed(owner, { session_id: id, message: AGAIN[0] });
    assert.equal(running.status, 200);
    await until(() => stack.fake.requests.some((r) => r.at >= since && r.kind));
    // Meanwhile: a second turn is refused, and so is a stranger's Stop.
    const second = await call("POST", "/api/help", { owner, body: { session_id: id, message: "And another" } });
    assert.deepEqual([second.status, second.json.error.code], [409, "turn_in_progress"]);
    assert.equal((await call("POST", `/api/help/sessions/${id}/stop`, { owner: newOwner(), body: {} })).status, 404);
    const stop = await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: {} });
    assert.deepEqual([stop.status, stop.json], [200, { stopped: true }]);
    const events = await running.done;
    assert.equal(events.at(-1).event, "stopped");
    assert.ok(await until(() => stack.fake.requests.find((r) => r.at >= since && r.kind)?.closedEarly, 5000), "the provider saw its connection closed");
    const after = (await call("GET", `/api/help/sessions/${id}`, { owner })).json;
    assert.deepEqual([after.turns, after.messages.length], [before.turns, before.messages.length], "nothing of the turn was kept");
    assert.deepEqual((await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: {} })).json, { stopped: false });
    // A JSON asker whose turn is stopped is told so.
    const asking = call("POST", "/api/help", { owner, body: { session_id: id, message: AGAIN[1] } });
    await until(async () => (await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: {} })).json.stopped);
    const refused = await asking;
    assert.deepEqual([refused.status, refused.json.error.code], [409, "turn_stopped"]);
    // The session takes the question again.
    slowModel(0);
    const answered = await ask(owner, QUESTION, id);
    assert.equal(answered.turns, before.turns + 1);
    // Then stopped once more: the next turn's events are numbered after the stopped one's, never
    // again with its numbers (the session did not count it).
    slowModel(300, LONG_ANSWER);
    const since2 = Date.now();
    const cut = await streamed(owner, { session_id: id, message: AGAIN[0] });
    await until(() => stack.fake.requests.some((r) => r.at >= since2 && r.kind));
    assert.deepEqual((await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: {} })).json, { stopped: true });
    const cutEvents = await cut.done;
    slowModel(150);
    const next = await streamed(owner, { session_id: id, message: AGAIN[1] });
    await until(() => next.events.length > 0);
    assert.ok(next.events[0].id > cutEvents.at(-1).id, `the next turn's ${next.events[0].id} comes after the stopped turn's ${cutEvents.at(-1).id}`);
    // A join naming an event the turn has not reached yet gets only the events after it.
    const ahead = next.events[0].id + 1;
    const rest = await readEvents(await join(owner, id, ahead)).done;
    assert.ok(rest.every((e) => e.id > ahead), `only events after ${ahead}: ${rest.map((e) => e.id)}`);
    const whole = await next.done;
    assert.equal(whole.at(-1).event, "complete");
    assert.deepEqual(rest.map((e) => e.id), whole.filter((e) => e.id > ahead).map((e) => e.id));
  });

  test("a streamed question sent while the desk answers waits: its stream says so, then it is answered after, in order; past four, a JSON one or a stranger's is refused; a waiting one can be stopped; the tabs are told the line", async () => {
    const { owner, id, since, running } = await answering();
    assert.equal(running.status, 200);
    await until(() => stack.fake.requests.some((r) => r.at >= since && r.kind && !r.system.startsWith("Translate")));
    const questions = ["Why are my answers slow?", "Why does an answer stop midway?", "Answers are slow: why?", "Why do answers get slow?"];
    const tab = await watchSession(owner, id);
    assert.equal(tab.opened, true);
    const line = (watcher) => watcher.messages.findLast((m) => m.type === "help:waiting")?.messages;
    const waiting = [];
    for (const message of questions) waiting.push(await streamed(owner, { session_id: id, message }));
    await until(() => line(tab)?.length === 4);
    assert.deepEqual(line(tab), waiting.map((w, i) => ({ id: w.waiting, content: questions[i], action: false })), "a watching tab is told each question queued, in order");
    const reloaded = await watchSession(owner, id);
    reloaded.ws.send(JSON.stringify({ type: "resume" }));
    await until(() => line(reloaded));
    assert.deepEqual(line(reloaded), line(tab), "a tab that joins is told the line after it caught up");
    const told = reloaded.messages.map((m) => m.type);
    assert.ok(told.indexOf("help:caught_up") < told.indexOf("help:waiting"), told.join());
    reloaded.ws.close();
    for (const queued of waiting) {
      assert.equal(queued.status, 200);
      assert.equal(queued.session, id);
      const first = await until(() => queued.events[0]);
      assert.deepEqual([first.event, Number.isNaN(first.id)], ["status", true], "a note of the stream, with no id");
      assert.match(first.data.message, /^Queued/);
      assert.equal(queued.waiting, first.data.waiting, "the stream's header names it too, as the conversations' do");
    }
    const fifth = await streamed(owner, { session_id: id, message: "One more question?" });
    const full = await fifth.done;
    assert.equal(fifth.status, 409, JSON.stringify(full));
    const json = await call("POST", "/api/help", { owner, body: { session_id: id, message: "And in JSON?" } });
    assert.deepEqual([json.status, json.json.error.code], [409, "turn_in_progress"]);
    const stranger = await call("POST", "/api/help", { owner: newOwner(), headers: { accept: "text/event-stream" }, body: { session_id: id, message: "Mine?" } });
    assert.equal(stranger.status, 404);
    // A waiting question is stopped by the id its stream gave: taken out of the line, nothing of it kept.
    const last = waiting.pop();
    const bad = await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: { waiting: "not an id" } });
    assert.deepEqual([bad.status, bad.json.error.code], [422, "invalid_request"]);
    const noWaiting = await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: { withdraw: true } });
    assert.deepEqual([noWaiting.status, noWaiting.json.error.code], [422, "invalid_request"], "a withdrawal names its question");
    const stopped = await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: { waiting: last.events[0].data.waiting, withdraw: true } });
    assert.deepEqual([stopped.status, stopped.json], [200, { stopped: true }]);
    assert.deepEqual((await last.done).map((e) => e.event), ["status", "stopped"]);
    const again = await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: { waiting: last.events[0].data.waiting, withdraw: true } });
    assert.deepEqual(again.json, { stopped: true }, "a withdrawal sent again (its answer lost) answers the same");
    await until(() => line(tab)?.length === 3);
    assert.deepEqual(line(tab).map((m) => m.content), questions.slice(0, 3), "the stopped one left the line");
    // Each other is answered after the one before, as a turn of its own, on its own stream.
    await until(() => waiting[0].events.some((e) => !Number.isNaN(e.id)));
    const begun = await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: { waiting: waiting[0].waiting, withdraw: true } });
    assert.deepEqual(begun.json, { stopped: false }, "a question whose turn has begun is not withdrawn: it runs on");
    const ends = await Promise.all([running.done, ...waiting.map((w) => w.done)]);
    const turns = ends.map((events) => Math.floor(events.find((e) => !Number.isNaN(e.id)).id / 1_000_000));
    assert.deepEqual(turns, [2, 3, 4, 5], "one turn each, in the order sent");
    for (const events of ends) assert.equal(events.at(-1).event, "complete", JSON.stringify(events.at(-1)));
    const session = (await call("GET", `/api/help/sessions/${id}`, { owner })).json;
    assert.deepEqual(session.messages.filter((m) => m.role === "user").map((m) => m.text), [QUESTION, AGAIN[0], ...questions.slice(0, 3)]);
    assert.equal(session.turns, 5);
    assert.deepEqual(line(tab), [], "each left the line as its turn began");
    // Each waiting question's turn is told with the id it waited under (a tab reloaded since
    // follows it as its own).
    const started = tab.messages.filter((m) => m.type === "help:turn_started").map((m) => [m.message, m.waiting_id ?? null]);
    assert.deepEqual(started.slice(-3), questions.slice(0, 3).map((q, i) => [q, waiting[i].waiting]));
    tab.ws.close();
  });

  test("a question waiting behind a new session's first question that fails, or is stopped, makes the session itself, under the same id", async () => {
    for (const end of ["fails", "is stopped"]) {
      const owner = newOwner();
      const first = (request) => JSON.stringify(request.body?.messages ?? []).includes("Why are answers slow");
      const ending = end === "fails" ? { status: 500, latencyMs: 1500 } : { reply: LONG_ANSWER, paced: true, delayMs: 300 };
      stack.fake.script((request) => (request.system.startsWith("Translate") ? { reply: "[de]" } : first(request) ? ending : { reply: SLOW_ANSWER }));
      const since = Date.now();
      const running = await streamed(owner, { message: QUESTION });
      assert.equal(running.status, 200);
      await until(() => stack.fake.requests.some((r) => r.at >= since && r.kind));
      const waiting = await streamed(owner, { session_id: running.session, message: AGAIN[0] });
      assert.equal(waiting.status, 200, end);
      assert.match(waiting.waiting ?? "", /^[0-9a-f]{32}$/);
      if (end === "is stopped") assert.equal((await call("POST", `/api/help/sessions/${running.session}/stop`, { owner, body: {} })).json.stopped, true);
      assert.equal((await running.done).at(-1).event, end === "fails" ? "error" : "stopped");
      const answered = await waiting.done;
      assert.equal(answered.at(-1).event, "complete", `${end}: ${JSON.stringify(answered.at(-1))}`);
      assert.equal(answered.at(-1).data.payload.session_id, running.session);
      const session = (await call("GET", `/api/help/sessions/${running.session}`, { owner })).json;
      assert.deepEqual([session.turns, session.messages.map((m) => m.role), session.messages[0].text], [1, ["user", "desk"], AGAIN[0]], end);
    }
  });

  test("a question's turn that ended while the next one began is still joined whole by its number (a tab busy or away learns it was stopped)", async () => {
    const { owner, id, since, running } = await answering();
    await until(() => stack.fake.requests.some((r) => r.at >= since && r.kind && !r.system.startsWith("Translate")));
    const stopping = await streamed(owner, { session_id: id, message: "Why are my answers slow?" });
    const next = await streamed(owner, { session_id: id, message: "Why does an answer stop midway?" });
    await until(() => stopping.events.some((e) => !Number.isNaN(e.id)));
    const stop = await call("POST", `/api/help/sessions/${id}/stop`, { owner, body: { waiting: stopping.waiting } });
    assert.deepEqual(stop.json, { stopped: true });
    const stoppedEvents = (await stopping.done).filter((e) => !Number.isNaN(e.id));
    assert.equal(stoppedEvents.at(-1).event, "stopped");
    const turn = Math.floor(stoppedEvents[0].id / 1_000_000);
    await until(() => next.events.some((e) => !Number.isNaN(e.id)));
    // The next turn runs now; the stopped one, named by its number alone, is read whole.
    const joined = await join(owner, id, turn * 1_000_000);
    assert.equal(joined.status, 200);
    const events = await readEvents(joined).done;
    assert.deepEqual(events.map((e) => [e.id, e.event]), stoppedEvents.map((e) => [e.id, e.event]));
    assert.equal((await join(newOwner(), id, turn * 1_000_000)).status, 404, "nobody else's");
    // A join naming no kept turn gets the running one, as before.
    const current = await readEvents(await join(owner, id)).done;
    assert.ok(current.length > 0 && current.every((e) => Math.floor(e.id / 1_000_000) === turn + 1), JSON.stringify(current.map((e) => e.id)));
    for (const answered of [running, next]) assert.equal((await answered.done).at(-1).event, "complete");
  });

  test("HELP_QUEUE=false: a streamed question sent while the desk answers is refused at once, as before (409 turn_in_progress)", async () => {
    const other = await startStack({ config: generousLimits, overrides: { HELP_QUEUE: "false" } });
    try {
      other.fake.script((request) => (request.system.startsWith("Translate") ? { reply: "[de]" } : { reply: SLOW_ANSWER, paced: true, delayMs: 200 }));
      const owner = newOwner();
      const post = (body) =>
        fetch(`${other.base}/api/help`, { method: "POST", headers: { ...asOwner(owner), "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify(body) });
      const first = await post({ message: QUESTION });
      assert.equal(first.status, 200);
      const id = first.headers.get("x-stepwise-session");
      const events = readEvents(first);
      await until(() => events.events.some((e) => e.event === "status"));
      const second = await post({ session_id: id, message: AGAIN[0] });
      const refused = await second.json();
      assert.deepEqual([second.status, refused.error.code], [409, "turn_in_progress"]);
      assert.equal((await events.done).at(-1).event, "complete");
    } finally {
      await other.stop();
    }
  });

  /** A tab's WebSocket on help session `id` as `owner`: whether it opened, and its messages. */
  const watchSession = async (owner, id) => {
    const ws = new WebSocket(`${stack.base.replace("http", "ws")}/api/help/sessions/${id}/ws`, ["stepwise.v1", `bearer.${owner}`]);
    const messages = [];
    ws.addEventListener("message", (event) => messages.push(JSON.parse(event.data)));
    const opened = await new Promise((resolve) => {
      ws.addEventListener("open", () => resolve(true), { once: true });
      ws.addEventListener("error", () => resolve(false), { once: true });
    });
    return { ws, opened, messages, seen: (type) => until(() => messages.find((m) => m.type === type), 15000) };
  };

  test("a waiting question whose turn cannot begin (the session closed by an operator meanwhile) ends its stream with the error and every tab is told, by its waiting id", async () => {
    slowModel(0);
    const owner = newOwner();
    const id = (await ask(owner, QUESTION)).session_id;
    assert.equal((await call("POST", `/api/help/sessions/${id}/handoff`, { owner, body: {} })).status, 200);
    slowModel(150, LONG_ANSWER);
    const since = Date.now();
    const running = await streamed(owner, { session_id: id, message: AGAIN[0] });
    assert.equal(running.status, 200, JSON.stringify(running.events));
    await until(() => stack.fake.requests.some((r) => r.at >= since && r.kind && !r.system.startsWith("Translate")));
    const tab = await watchSession(owner, id);
    const waiting = await streamed(owner, { session_id: id, message: "Why do answers get slow?" });
    assert.match(waiting.waiting ?? "", /^[0-9a-f]{32}$/);
    const resolved = await call("POST", `/api/help/escalations/${id}/resolve`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(resolved.json.status, "resolved", resolved.text);
    const events = await waiting.done;
    assert.deepEqual([events.at(-1).event, events.at(-1).data.code], ["error", "session_closed"], JSON.stringify(events.at(-1)));
    const told = await until(() => tab.messages.find((m) => m.type === "help:not_begun"));
    assert.deepEqual([told.waiting_id, told.code, told.message], [waiting.waiting, "session_closed", events.at(-1).data.message]);
    await running.done;
    const session = (await call("GET", `/api/help/sessions/${id}`, { owner })).json;
    assert.ok(!session.messages.some((m) => m.text === "Why do answers get slow?"), "nothing of it kept");
    tab.ws.close();
  });

  test("every tab of a session is told: a turn begun elsewhere is announced and joined whole, a change is read again", async () => {
    slowModel(0);
    const owner = newOwner();
    const id = (await ask(owner, QUESTION)).session_id;
    // Refusals: another owner's session, a session that does not exist, another site's page, no upgrade.
    assert.equal((await watchSession(newOwner(), id)).opened, false);
    assert.equal((await watchSession(owner, "0".repeat(32))).opened, false);
    // (fetch refuses to send an upgrade: a plain request carries it.)
    const upgrade = { ...asOwner(owner), upgrade: "websocket", connection: "Upgrade", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" };
    const foreign = await new Promise((resolve, reject) => {
      const url = new URL(`${stack.base}/api/help/sessions/${id}/ws`);
      const req = httpRequest(url, { headers: { ...upgrade, origin: "https://elsewhere.example" } }, (res) => (res.resume(), resolve(res.statusCode)));
      req.on("upgrade", (res, socket) => (socket.destroy(), resolve(res.statusCode)));
      req.on("error", reject);
      req.end();
    });
    assert.equal(foreign, 403);
    assert.equal((await fetch(`${stack.base}/api/help/sessions/${id}/ws`, { headers: asOwner(owner) })).status, 422);
    const other = await watchSession(owner, id);
    assert.ok(other.opened);
    assert.equal(other.ws.protocol, "stepwise.v1");
    other.ws.send(JSON.stringify({ type: "resume" }));
    await other.seen("help:caught_up");
    assert.equal(other.messages.some((m) => m.type === "help:turn_started"), false, "no turn runs");
    // A turn asked in one tab is announced to the other, which joins it after the announced id.
    slowModel(250);
    const asking = await streamed(owner, { session_id: id, message: AGAIN[0] });
    assert.equal(asking.status, 200);
    const started = await other.seen("help:turn_started");
    assert.deepEqual([started.message, started.turn, started.after], [AGAIN[0], 2, 2_000_000]);
    // A tab opened meanwhile is told of the running turn when it asks.
    const late = await watchSession(owner, id);
    late.ws.send(JSON.stringify({ type: "resume" }));
    await late.seen("help:waiting");
    assert.deepEqual(late.messages.map((m) => m.type), ["help:turn_started", "help:caught_up", "help:waiting"]);
    assert.deepEqual(late.messages[2].messages, [], "nothing waits behind it");
    assert.equal(late.messages[0].after, started.after);
    const joined = await join(owner, id, started.after);
    assert.equal(joined.status, 200);
    const [mine, theirs] = await Promise.all([asking.done, readEvents(joined).done]);
    assert.deepEqual(theirs.map((e) => e.id), mine.map((e) => e.id), "the other tab got every event of the turn");
    assert.equal(theirs.at(-1).data.payload.reply, SLOW_ANSWER);
    // The answer and a handoff are changes every tab is told of (the asking tab's too).
    await other.seen("help:changed");
    const changes = other.messages.filter((m) => m.type === "help:changed").length;
    assert.equal((await call("POST", `/api/help/sessions/${id}/handoff`, { owner, body: {} })).status, 200);
    await until(() => other.messages.filter((m) => m.type === "help:changed").length > changes, 15000);
    other.ws.close();
    late.ws.close();
  });
});

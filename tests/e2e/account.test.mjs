// End-to-end tests of an owner's data in one piece (issue 31) under `wrangler dev`: the export
// holds everything the owner made (research with its share page, a stream with its literature,
// both kinds of conversation with a context request and its supply, a help session handed to a
// person, the telemetry rows) and nothing of anyone else; an erase needs its confirmation,
// runs in rounds, and afterwards nothing of the owner is readable by id or by list, while the
// webhook and telemetry never held their text. Pages are 10 items here (KV's smallest list
// page), so cursors and rounds are exercised with a dozen drafts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ADMIN_TOKEN, apiCaller, fakeProvider, generousLimits, newOwner, ownerId, startStack } from "./harness.mjs";
import { completedJob as fixtureJob, savedStream } from "./fixtures.mjs";

const WEBHOOK_SECRET = "whsec-account-test-0123456789";
/** A phrase only the owner under test ever typed: found in the export, never in a webhook. */
const MARKER = "Quokka-7731";
/** Drafts beside the two completed jobs: more research than one page holds. */
const DRAFTS = 10;
let stack;
const call = apiCaller(() => stack.base);
const json = { accept: "application/json" };

before(async () => {
  stack = await startStack({
    providers: (url) => [fakeProvider(url, "fake-openai", "openai"), fakeProvider(url, "fake-anthropic", "anthropic"), { name: "offline", kind: "offline" }],
    config: generousLimits,
    overrides: (fakeUrl) => ({ NOTIFY_WEBHOOK_URL: `${fakeUrl}/webhook`, WEBHOOK_SECRET, EXPORT_PAGE_ITEMS: "10", ERASE_BATCH_ITEMS: "10" }),
  });
  stack.fake.script((request) => {
    const text = JSON.stringify(request.body);
    if (request.system?.startsWith("You name")) return { reply: "EGFR review" };
    if (text.includes("=== Source")) return { reply: "Synthesis: the reports agree.\n" };
    if (!request.system?.includes("Stepwise assistant")) return { reply: "Provider report: EGFR inhibitors at 80 mg." };
    return { reply: "Plain answer." };
  });
});
after(async () => {
  await stack?.stop();
});

/** A completed research job of `owner` asking `prompt`. */
const completedJob = (owner, prompt) =>
  fixtureJob(call, owner, { prompt, selected_llms: ["fake-openai", "fake-anthropic"], synthesis_llm: "fake-openai" });

/** Everything `owner` owns, each section's pages joined, as the app's download does. */
async function exportAll(owner) {
  const first = await call("GET", "/api/me/export", { owner });
  assert.equal(first.status, 200, first.text);
  const document = structuredClone(first.json);
  for (const name of ["research", "streams", "assistant_conversations", "guided_conversations", "help_sessions"]) {
    while (document[name].cursor) {
      const next = await call("GET", `/api/me/export?section=${name}&cursor=${encodeURIComponent(document[name].cursor)}`, { owner });
      assert.equal(next.status, 200, next.text);
      assert.deepEqual(Object.keys(next.json).sort(), ["complete", "exported_at", name, "owner"].sort(), "a continuation holds its section alone");
      document[name].items.push(...next.json[name].items);
      document[name].cursor = next.json[name].cursor;
    }
  }
  return { first: first.json, document };
}

/** Erases everything of `owner` in rounds; the rounds' answers. */
async function eraseAll(owner) {
  const rounds = [];
  for (let i = 0; i < 30; i++) {
    const step = await call("DELETE", "/api/me", { owner, body: { confirm: ownerId(owner) } });
    assert.equal(step.status, 200, step.text);
    rounds.push(step.json);
    if (step.json.done) return rounds;
  }
  throw new Error(`the erase never finished: ${JSON.stringify(rounds.at(-1))}`);
}

describe("an owner's data in one piece", () => {
  const owner = newOwner();
  const other = newOwner();
  const made = {};

  before(async () => {
    // Research, shared.
    made.jobs = [await completedJob(owner, `Compare EGFR inhibitors ${MARKER}`), await completedJob(owner, "Second question")];
    for (let i = 0; i < DRAFTS; i++) {
      const draft = await call("POST", "/api/research/draft", { owner, body: { prompt: `A draft kept for later, number ${i}`, selected_llms: ["fake-openai"] } });
      assert.equal(draft.status, 201, draft.text);
      made.jobs.push(draft.json);
    }
    const shared = await call("POST", `/api/research/${made.jobs[0].id}/share`, { owner, body: {} });
    assert.equal(shared.status, 200, shared.text);
    made.sharePath = new URL(shared.json.share_info.url).pathname;
    assert.equal((await fetch(stack.base + made.sharePath)).status, 200);
    // A guided conversation walked to a saved stream, with literature kept.
    made.guided = {};
    made.stream = await savedStream(call, owner, made.guided);
    const search = await call("GET", `/api/articles/search?query=EGFR&stream_id=${made.stream.id}`, { owner });
    assert.equal(search.status, 200, search.text);
    // An assistant conversation with a context request met by the user.
    const deferred = await call("POST", "/api/assistant", { owner, headers: json, body: { provider: "fake-openai", message: `Compare this with my notes ${MARKER}`, context: { current_page: "chat" } } });
    assert.equal(deferred.json.status, "context_required", deferred.text);
    made.conversation = deferred.json.conversation_id;
    const supplied = await call("POST", "/api/assistant/context-supply", { owner, body: { conversation_id: made.conversation, request_id: deferred.json.request_id, payloads: deferred.json.required.map((s) => ({ slot: s.slot, text: `My notes say ${MARKER}` })) } });
    assert.equal(supplied.status, 200, supplied.text);
    // A help session handed to a person.
    const asked = await call("POST", "/api/help", { owner, body: { message: `How do I share a report? ${MARKER}` } });
    assert.equal(asked.status, 200, asked.text);
    made.session = asked.json.session_id;
    const handed = await call("POST", `/api/help/sessions/${made.session}/handoff`, { owner, body: {} });
    assert.equal(handed.status, 200, handed.text);
    // The other owner's things, which must survive.
    made.otherStream = await savedStream(call, other);
    made.otherJob = await completedJob(other, "Someone else's question");
  });

  test("the export holds everything the owner made, page by page, and nothing of anyone else", async () => {
    const { first, document } = await exportAll(owner);
    assert.equal(first.owner.id, ownerId(owner));
    assert.equal(first.complete, false, "pages of 10: the first document is not all");
    assert.equal(first.research.items.length, 10);
    assert.ok(first.research.cursor);
    assert.deepEqual(document.research.items.map((j) => j.id).sort(), made.jobs.map((j) => j.id).sort());
    assert.ok(document.research.items.some((j) => j.share_info), "the shared job says so");
    assert.deepEqual(document.streams.items.map((s) => s.id), [made.stream.id]);
    assert.equal(document.streams.items[0].literature.query, "EGFR", "the stream's literature comes with it");
    assert.equal(document.guided_conversations.items.length, 1);
    const guided = document.guided_conversations.items[0];
    assert.equal(guided.id, made.guided.conversation_id);
    assert.equal(guided.token_hash, undefined, "the guided token's hash stays on the server");
    assert.deepEqual(document.assistant_conversations.items.map((c) => c.id), [made.conversation]);
    const conversation = JSON.stringify(document.assistant_conversations.items[0]);
    assert.ok(conversation.includes(`My notes say ${MARKER}`), "the supply is in the export");
    assert.ok(document.assistant_conversations.items[0].requests.length >= 1, "with its context request");
    assert.deepEqual(document.help_sessions.items.map((s) => s.id), [made.session]);
    assert.equal(document.help_sessions.items[0].status, "escalated");
    assert.ok(JSON.stringify(document.help_sessions.items[0]).includes(MARKER));
    assert.ok(document.context_request_telemetry.items.some((r) => r.conversation_id === made.conversation));
    const text = JSON.stringify(document);
    assert.ok(!text.includes(made.otherStream.id) && !text.includes(made.otherJob.id), "nothing of the other owner");
    assert.ok(!text.includes(ownerId(other)));

    const bad = await call("GET", "/api/me/export?section=diaries", { owner });
    assert.equal(bad.status, 422);
    assert.match(bad.json.error.message, /unknown section `diaries`/);
    const orphan = await call("GET", "/api/me/export?cursor=abc", { owner });
    assert.equal(orphan.status, 422);
    assert.equal((await fetch(`${stack.base}/api/me/export`)).status, 401);
  });

  test("an erase needs the owner's own id as confirmation, and changes nothing without it", async () => {
    for (const body of [{}, { confirm: ownerId(other) }, { confirm: "" }]) {
      const refused = await call("DELETE", "/api/me", { owner, body });
      assert.equal(refused.status, 422, refused.text);
      assert.ok(["confirmation_required", "invalid_json", "invalid_request"].includes(refused.json.error.code), refused.text);
    }
    const form = await call("DELETE", "/api/me", { owner, raw: `confirm=${ownerId(owner)}`, headers: { "content-type": "application/x-www-form-urlencoded" } });
    assert.equal(form.status, 415);
    const still = await call("GET", `/api/streams/${made.stream.id}`, { owner });
    assert.equal(still.status, 200, "nothing was erased");
  });

  test("after an erase nothing of the owner is readable by id or by list; the other owner keeps theirs", async () => {
    const hooksBefore = stack.fake.webhooks.length;
    const rounds = await eraseAll(owner);
    assert.ok(rounds.length > 1, `batches of 10 take rounds: ${JSON.stringify(rounds)}`);
    assert.ok(rounds.slice(0, -1).every((r) => !r.done));
    assert.ok(rounds.every((r) => r.failed === 0), JSON.stringify(rounds));
    const total = (name) => rounds.reduce((n, r) => n + (r.erased[name] ?? 0), 0);
    assert.equal(total("research"), 2 + DRAFTS);
    assert.equal(total("streams"), 1);
    assert.equal(total("assistant_conversations"), 1);
    assert.equal(total("guided_conversations"), 1);
    assert.equal(total("help_sessions"), 1);
    assert.ok(total("context_request_telemetry") >= 1);

    for (const job of made.jobs) assert.equal((await call("GET", `/api/research/${job.id}`, { owner })).status, 404);
    assert.equal((await fetch(stack.base + made.sharePath)).status, 404, "the share page is gone");
    assert.equal((await call("GET", `/api/streams/${made.stream.id}`, { owner })).status, 404);
    assert.equal((await call("GET", `/api/assistant/conversations/${made.conversation}`, { owner })).status, 404);
    assert.equal((await call("GET", `/api/help/sessions/${made.session}`, { owner })).status, 404);
    const guided = await call("GET", `/api/conversations/${made.guided.conversation_id}`, { owner, headers: { "x-conversation-token": made.guided.token } });
    assert.equal(guided.status, 404, guided.text);
    for (const path of ["/api/research", "/api/streams", "/api/assistant/conversations"]) {
      const listed = await call("GET", path, { owner });
      assert.deepEqual(listed.json.items, [], path);
    }
    const artifacts = await call("GET", `/api/assistant/artifacts?stream_id=${made.stream.id}`, { owner });
    assert.equal(artifacts.status, 404, "the stream's literature went with it");
    const stats = await call("GET", "/api/assistant/stats", { owner });
    assert.equal(stats.json.owner.issued, 0, "no telemetry row is left");
    const operators = await fetch(`${stack.base}/api/help/escalations`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const listedSessions = JSON.stringify(await operators.json());
    assert.ok(!listedSessions.includes(made.session), "the operators' list no longer has the session");
    const { document } = await exportAll(owner);
    for (const name of ["research", "streams", "assistant_conversations", "guided_conversations", "help_sessions", "context_request_telemetry"]) {
      assert.deepEqual(document[name].items, [], name);
    }
    assert.equal(document.complete, true);
    // An erase with nothing left is done at once.
    const again = await call("DELETE", "/api/me", { owner, body: { confirm: ownerId(owner) } });
    assert.equal(again.json.done, true);

    // The webhook heard of the handoff, by id: never the owner's words.
    assert.ok(stack.fake.webhooks.some((w) => w.raw.includes(made.session)), "the handoff was announced");
    for (const hook of stack.fake.webhooks) assert.ok(!hook.raw.includes(MARKER), `a webhook held the owner's text: ${hook.raw}`);
    assert.equal(stack.fake.webhooks.length, hooksBefore, "an erase announces nothing");

    assert.equal((await call("GET", `/api/streams/${made.otherStream.id}`, { owner: other })).status, 200);
    assert.equal((await call("GET", `/api/research/${made.otherJob.id}`, { owner: other })).status, 200);
  });
});

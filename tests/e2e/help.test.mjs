// End-to-end tests of the help desk under `wrangler dev` with local D1 (the migrations'
// schema and starter knowledge base): the relevance floor replayed from the scores measured on
// the starter articles (tests/vectors/help_relevance.json), requests for a person recognised
// before any search (tests/vectors/help_routing.json), operators' articles kept out of the users'
// search, article imports, BM25 ranking and hybrid search with a fake embeddings endpoint,
// clarification loops of two and three questions that never search while active, the translation
// call, the generation prompt the fake provider receives, the answer cache, an answer that offers
// a person and hands over when the user accepts (signed webhook, operator view), questions asked
// after the handoff, reloads mid-loop, a failed model call that changes nothing, and owner
// isolation. Live turns are in help-live.test.mjs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { assertSchema } from "../contract.mjs";
import { ADMIN_TOKEN, apiCaller, asOwner, generousLimits, newOwner, readEvents, startStack, until, wranglerConfig } from "./harness.mjs";

const WEBHOOK_SECRET = "help-webhook-secret";
const vector = (name) => JSON.parse(readFileSync(new URL(`../vectors/${name}`, import.meta.url), "utf8"));
const relevance = vector("help_relevance.json");
const routing = vector("help_routing.json");
let stack;

before(async () => {
  stack = await startStack({
    // The floor under test is the measured one (the first test checks wrangler.toml sets it).
    config: (config) => ((config.vars.HELP_MIN_BM25 = String(relevance.floor)), generousLimits(config)),
    overrides: (fakeUrl) => ({
      NOTIFY_WEBHOOK_URL: `${fakeUrl}/webhook`,
      WEBHOOK_SECRET,
      EMBEDDINGS_BASE_URL: `${fakeUrl}/v1`,
      EMBEDDINGS_MODEL: "fake-embed",
    }),
  });
  // A stable fake embedding model: texts about zebras (or striped horses) point one way,
  // everything else is the zero vector, similar to nothing.
  stack.fake.embeddings.vectorOf = (text) => (/zebra|striped horse/i.test(text) ? [1, 0, 0, 0] : [0, 0, 0, 0]);
});
after(async () => {
  await stack?.stop();
});

const call = apiCaller(() => stack.base);
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** The fake provider answers generation with a marker of the prompt it got, and translation
 * with a tagged copy of the question. */
function scriptModel() {
  stack.fake.script((request) => {
    const user = (request.body?.messages ?? []).filter((m) => m.role === "user").map((m) => m.content).join("");
    if (request.system.startsWith("Translate")) return { reply: `[de] ${user}` };
    return { reply: `Generated answer for: ${user.split("User Query: ")[1] ?? "?"}` };
  });
}

async function ask(owner, message, sessionId) {
  const body = sessionId ? { session_id: sessionId, message } : { message };
  const { status, json } = await call("POST", "/api/help", { owner, body });
  assert.equal(status, 200, JSON.stringify(json));
  return json;
}

const modelCalls = () => stack.fake.requests.filter((r) => r.kind);

/** The article a turn answers from, or whose clarifying question it asks. */
async function articleOf(owner, turn) {
  if (turn.doc) return turn.doc.id;
  if (!turn.question) return null;
  const session = (await call("GET", `/api/help/sessions/${turn.session_id}`, { owner })).json;
  return session.state.doc.id;
}

// First, before any test imports articles (they would change BM25's statistics).
describe("relevance and routing on the starter knowledge base", () => {
  test("wrangler.toml sets the relevance floor measured on the starter knowledge base", () => {
    const pinned = wranglerConfig().vars.HELP_MIN_BM25;
    assert.ok(pinned === undefined || Number(pinned) === relevance.floor, `wrangler.toml pins HELP_MIN_BM25 = ${pinned}; the measured floor is ${relevance.floor}`);
  });

  test("every measured question gets the decision its scores give: a match below the floor is no match", async () => {
    scriptModel();
    const owner = newOwner();
    for (const c of relevance.cases) {
      const turn = await ask(owner, c.question);
      assert.equal(turn.dialog_state === "ESCALATED", false, c.question);
      assert.equal(turn.no_answer, c.answer === null, `${c.question}: ${turn.reply.slice(0, 80)}`);
      assert.equal(await articleOf(owner, turn), c.answer, c.question);
      if (c.answer === null) assert.equal(turn.handoff_offered, true, "no answer offers a person");
    }
    const excel = await ask(newOwner(), "can I export my streams to Excel?");
    assert.equal(excel.no_answer, true);
    assert.equal(excel.status, "open");
  });

  test("a request for a person hands the session over at once, in every language the desk detects", async () => {
    const languages = new Set();
    for (const request of routing.requests.filter((r) => !languages.has(r.language) && languages.add(r.language))) {
      const owner = newOwner();
      const first = await ask(owner, "My research job failed");
      assert.equal(first.question.number, 1);
      const handed = await ask(owner, request.message, first.session_id);
      assert.deepEqual(handed.trace, ["guardrails", "router", "handoff"], request.message);
      assert.equal(handed.status, "escalated");
      assert.equal(handed.dialog_state, "ESCALATED");
      assert.equal(handed.footer, "Connecting you to an agent…");
      assert.equal(handed.search_calls, 1, "no search for the request");
      assert.deepEqual([handed.interrupt.resolution, handed.interrupt.reason], ["skipped", "the user asked for a person"], "the question waited on is skipped");
      const session = (await call("GET", `/api/help/sessions/${first.session_id}`, { owner })).json;
      assert.equal(session.escalation.reason, "requested");
      assert.equal(session.state.clarification_context.active, false, "the loop stopped");
      assert.deepEqual(session.state.clarification_context.answers, {}, "the request is not an answer");
    }
    assert.equal(languages.size, 7);
  });

  test("operators' articles are listed for what they are and never answer a user", async () => {
    const { json: list } = await call("GET", "/api/help/docs");
    const operators = list.items.filter((d) => d.audience === "operator");
    assert.ok(operators.some((d) => d.id === "operator-webhook-notifications"));
    assert.ok(operators.every((d) => d.id.startsWith("operator-")));
    assert.ok(list.items.some((d) => d.id === "owner-token-lost" && d.audience === "user"));
    const webhook = await ask(newOwner(), "Is WEBHOOK_SECRET set next to NOTIFY_WEBHOOK_URL?");
    assert.equal(webhook.no_answer, true, "the operators' webhook article is not the users'");
    const deleting = await ask(newOwner(), "how do I delete my data?");
    assert.equal(deleting.doc.id, "deleting-data");
    assert.equal(deleting.question, null, "no question about a sign-in an anonymous owner does not have");
    const broken = await ask(newOwner(), "it doesn't work");
    assert.equal(broken.question.text, "Which page is it on: Guided chat, Streams, Research, Help or the assistant?");
  });
});

describe("the knowledge base", () => {
  test("the starter articles are there, and imports are admin-only, checked whole and idempotent", async () => {
    const { json: list } = await call("GET", "/api/help/docs");
    assert.ok(list.items.length >= 12);
    assert.ok(list.items.some((d) => d.id === "research-job-failed" && d.questions === 2));

    const doc = { title: "Zebra handbook", body: "Caring for zebras in the office.", clarifying_questions: ["How many zebras?"] };
    assert.equal((await call("PUT", "/api/help/docs/zebras", { body: doc })).status, 403);
    const bad = await call("PUT", "/api/help/docs/zebras", { body: { ...doc, clarifying_questions: ["Q?", "Q?"] }, headers: admin });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.error.code, "invalid_doc");
    assert.match(bad.json.error.message, /repeats/);
    assert.equal((await call("GET", "/api/help/docs/zebras")).status, 404, "a refused article is not stored");

    const batch = { docs: [{ id: "zebras", ...doc }, { id: "llamas", title: "Llama corner", body: "Llamas need hay.", requires_handoff: true }] };
    const first = await call("POST", "/api/help/docs:import", { body: batch, headers: admin });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json.created.sort(), ["llamas", "zebras"]);
    const stored = (await call("GET", "/api/help/docs/zebras")).json;
    const again = await call("POST", "/api/help/docs:import", { body: batch, headers: admin });
    assert.deepEqual(again.json.unchanged.sort(), ["llamas", "zebras"]);
    assert.equal((await call("GET", "/api/help/docs/zebras")).json.updated_at, stored.updated_at);
    const oneBad = { docs: [{ id: "ok-doc", title: "Fine", body: "x" }, { id: "Not An Id", title: "x", body: "y" }] };
    assert.equal((await call("POST", "/api/help/docs:import", { body: oneBad, headers: admin })).status, 422);
    assert.equal((await call("GET", "/api/help/docs/ok-doc")).status, 404, "nothing of a refused import is stored");
  });

  test("BM25 ranks the article a question is about, and weak matches are no answer", async () => {
    scriptModel();
    const owner = newOwner();
    const shared = await ask(owner, "How can I share my research report with a colleague?");
    assert.equal(shared.doc.id, "sharing-reports");
    assert.deepEqual(shared.trace, ["guardrails", "router", "check_cache", "hybrid_search", "prompt_routing", "generation"]);
    const limited = await ask(owner, "I keep getting 429 rate_limited errors");
    assert.equal(limited.question.text, "Does the message say there are too many requests, or that the daily limit is reached?");
    const none = await ask(newOwner(), "What is the capital of Mongolia?");
    assert.equal(none.no_answer, true);
    assert.match(none.reply, /could not find an answer/);
    assert.equal(none.doc, null);
  });

  test("hybrid search finds by vector what BM25 cannot, and BM25 alone answers when embeddings fail", async () => {
    scriptModel();
    const embeddings = stack.fake.embeddings;
    const owner = newOwner();
    const [chatBefore, embedBefore] = [modelCalls().length, embeddings.requests.length];
    const found = await ask(owner, "Tips for a striped horse?");
    // The embeddings call is a model call of the owner's, charged like the chat calls.
    const me = await call("GET", "/api/me", { owner });
    const made = modelCalls().length - chatBefore + (embeddings.requests.length - embedBefore);
    assert.equal(embeddings.requests.length - embedBefore, 1);
    assert.equal(me.json.usage.calls, made);
    // Every article got its vector (a few per search); the question was embedded too.
    assert.ok(embeddings.requests.some((r) => r.body.model === "fake-embed" && r.body.input.length > 1));
    assert.equal(found.question.text, "How many zebras?", "the zebra article, found by its vector alone");
    embeddings.status = 500;
    try {
      const fallback = await ask(newOwner(), "How do I publish and share a report?");
      assert.equal(fallback.doc.id, "sharing-reports");
    } finally {
      embeddings.status = 0;
    }
  });
});

describe("the clarification loop", () => {
  test("two questions: search once, store answers verbatim, generate from spec §5.1's prompt", async () => {
    scriptModel();
    const owner = newOwner();
    const before = modelCalls().length;
    const first = await ask(owner, "My research job failed");
    assert.equal(first.dialog_state, "NEEDS_CLARIFICATION");
    assert.deepEqual(first.question, { number: 1, total: 2, text: "What does the job's badge say: awaiting confirmation or failed?" });
    assert.equal(first.search_calls, 1);
    assert.equal(modelCalls().length, before, "asking a question calls no model");
    // The question is an interrupt, the shape approvals and context requests have: open, no deadline.
    assertSchema("HelpTurn", first);
    assert.deepEqual(first.interrupt, {
      id: `${first.session_id}-q1`, kind: "question", state: "open", reminded: false,
      summary: "Question 1 of 2: What does the job's badge say: awaiting confirmation or failed?",
      opened_at: first.interrupt.opened_at,
    });
    const second = await ask(owner, "awaiting confirmation", first.session_id);
    assert.deepEqual(second.trace, ["guardrails", "router", "clarification"]);
    assert.equal(second.question.number, 2);
    assert.deepEqual([second.interrupt.id, second.interrupt.state], [`${first.session_id}-q2`, "open"]);
    const third = await ask(owner, "12", first.session_id);
    assert.deepEqual([third.interrupt.id, third.interrupt.state, third.interrupt.resolution, third.interrupt.resolved_by], [`${first.session_id}-q2`, "resolved", "answered", "user"]);
    assert.deepEqual(third.trace, ["guardrails", "router", "clarification", "prompt_routing", "generation"]);
    assert.equal(third.search_calls, 1, "the loop never searched: \"12\" is an answer, not a query");
    assert.equal(third.dialog_state, "ANSWER_PROVIDED");
    assert.equal(third.reply, "Generated answer for: My research job failed");
    const prompt = modelCalls().at(-1).body.messages.filter((m) => m.role === "user").at(-1).content;
    assert.match(prompt, /^Context: A research job asks every provider you picked/);
    assert.ok(prompt.includes("The user has provided the following details:\n- Question: What does the job's badge say: awaiting confirmation or failed? -> Answer: awaiting confirmation\n- Question: What does the failed provider's row say after \"failed:\"? -> Answer: 12\n\nUser Query: My research job failed"), prompt);
    const session = (await call("GET", `/api/help/sessions/${first.session_id}`, { owner })).json;
    assert.deepEqual(session.state.clarification_context.answers, {
      "What does the job's badge say: awaiting confirmation or failed?": "awaiting confirmation",
      "What does the failed provider's row say after \"failed:\"?": "12",
    });
    assert.equal(session.state.clarification_context.active, false);
    assert.equal(session.messages.length, 6);
    assertSchema("HelpSession", session);
    assert.deepEqual(session.interrupt, third.interrupt, "the session keeps the last question's interrupt");
  });

  test("three questions, resumed after a reload; a failed generation changes nothing", async () => {
    scriptModel();
    const doc = { title: "Webhook setup checklist", body: "Check the URL, the secret and the answer status.", clarifying_questions: ["Which URL?", "Is the secret set?", "What status does it answer?"] };
    assert.equal((await call("PUT", "/api/help/docs/webhook-checklist", { body: doc, headers: admin })).status, 200);
    const owner = newOwner();
    const first = await ask(owner, "webhook setup checklist please");
    assert.equal(first.question.total, 3);
    await ask(owner, "https://hooks.example/x", first.session_id);
    // A reload: the page reads the session and shows the waiting question.
    const reloaded = (await call("GET", `/api/help/sessions/${first.session_id}`, { owner })).json;
    assert.equal(reloaded.dialog_state, "NEEDS_CLARIFICATION");
    assert.equal(reloaded.state.clarification_context.current_index, 1);
    assert.equal(reloaded.messages.at(-1).question.text, "Is the secret set?");
    const third = await ask(owner, "yes", first.session_id);
    assert.equal(third.question.text, "What status does it answer?");
    stack.fake.script({ status: 500, message: "boom" });
    const failed = await call("POST", "/api/help", { owner, body: { session_id: first.session_id, message: "500" } });
    assert.equal(failed.status, 502);
    const unchanged = (await call("GET", `/api/help/sessions/${first.session_id}`, { owner })).json;
    assert.equal(unchanged.turns, 3);
    assert.deepEqual([unchanged.interrupt.id, unchanged.interrupt.state], [`${first.session_id}-q3`, "open"], "the failed turn resolved nothing");
    assert.equal(unchanged.state.clarification_context.current_index, 2, "still waiting for the third answer");
    scriptModel();
    const done = await ask(owner, "500", first.session_id);
    assert.equal(done.dialog_state, "ANSWER_PROVIDED");
    assert.equal(done.search_calls, 1);
  });

  test("questions are translated only when the user writes another language", async () => {
    scriptModel();
    const translations = () => modelCalls().filter((r) => r.system.startsWith("Translate")).length;
    const before = translations();
    const german = await ask(newOwner(), "Wie richte ich die Webhook setup checklist ein?");
    assert.equal(german.question.text, "[de] Which URL?");
    assert.equal(translations(), before + 1);
    assert.match(modelCalls().at(-1).system, /from English into German/);
    await ask(newOwner(), "How do I follow the webhook setup checklist?");
    assert.equal(translations(), before + 1, "no translation for an English question");
  });

  test("an answer needing no clarification is cached per owner: the second ask skips search", async () => {
    scriptModel();
    const owner = newOwner();
    const first = await ask(owner, "Why are answers slow or stop midway?");
    assert.equal(first.doc.id, "slow-answers");
    const calls = modelCalls().length;
    const second = await ask(owner, "why are answers SLOW or stop midway", first.session_id);
    assert.deepEqual(second.trace, ["guardrails", "router", "check_cache"]);
    assert.equal(second.search_calls, 1);
    assert.equal(second.reply, first.reply);
    assert.equal(modelCalls().length, calls);
    const other = await ask(newOwner(), "Why are answers slow or stop midway?");
    assert.ok(other.trace.includes("hybrid_search"), "another owner's question is not answered from this cache");
  });
});

describe("handoff", () => {
  test("an article that needs a person answers first and offers one; a yes hands over, and the user keeps asking", async () => {
    scriptModel();
    const owner = newOwner();
    const first = await ask(owner, "I want a copy of my data");
    assert.equal(first.question.text, "Do you want a copy of your data, or your data erased?");
    assert.equal(first.status, "open");
    const answered = await ask(owner, "a copy, please", first.session_id);
    assert.match(answered.reply, /^Generated answer for:/);
    assert.match(answered.reply, /A person needs to take this further\. Say yes, or press "Talk to a person"/);
    assert.equal(answered.footer, null);
    assert.equal(answered.status, "open", "nothing is handed over unasked");
    assert.equal(answered.dialog_state, "ANSWER_PROVIDED");
    assert.equal(answered.handoff_offered, true);
    assert.equal(answered.doc.id, "data-request");
    const accepted = await ask(owner, "yes", first.session_id);
    assert.deepEqual(accepted.trace, ["guardrails", "router", "handoff"]);
    assert.equal(accepted.footer, "Connecting you to an agent…");
    assert.equal(accepted.dialog_state, "ESCALATED");
    assert.equal(accepted.status, "escalated");
    assert.equal(accepted.doc, null);
    // The handoff is announced, and the user can go on asking meanwhile.
    const more = await ask(owner, "How do I share a report?", first.session_id);
    assert.equal(more.doc.id, "sharing-reports");
    assert.equal(more.status, "escalated");
    const again = await ask(owner, "Can I talk to a person?", first.session_id);
    assert.match(again.reply, /A person already has this conversation/);
    assert.equal(again.footer, null);

    const deadline = Date.now() + 15_000;
    let hook;
    while (!(hook = stack.fake.webhooks.find((w) => w.body.event?.session_id === first.session_id)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(hook, "the webhook got session.escalated");
    assert.equal(hook.body.type, "session.escalated");
    assert.equal(hook.body.event.reason, "article");
    assert.ok(!hook.raw.includes("a copy, please"), "the event carries no user text");
    const signature = createHmac("sha256", WEBHOOK_SECRET).update(hook.raw).digest("hex");
    assert.equal(hook.headers["x-stepwise-signature"], `sha256=${signature}`);

    assert.equal((await call("GET", "/api/help/escalations")).status, 403);
    const listed = (await call("GET", "/api/help/escalations", { headers: admin })).json;
    const entry = listed.items.find((s) => s.id === first.session_id);
    assert.ok(entry, "listed for operators");
    assert.equal(entry.messages[5].footer, "Connecting you to an agent…");
    assert.equal(entry.messages.at(-2).text, "Can I talk to a person?", "the person sees what was asked after the handoff");
    assert.equal(entry.escalation.query, "I want a copy of my data", "what the person takes over");
    assert.deepEqual(entry.escalation.answers, { "Do you want a copy of your data, or your data erased?": "a copy, please" });
    const resolved = await call("POST", `/api/help/escalations/${first.session_id}/resolve`, { headers: admin });
    assert.equal(resolved.json.status, "resolved");
    const closed = await call("POST", "/api/help", { owner, body: { session_id: first.session_id, message: "hello?" } });
    assert.equal(closed.status, 409);
    assert.equal(closed.json.error.code, "session_closed");
    const after = (await call("GET", "/api/help/escalations", { headers: admin })).json;
    assert.ok(!after.items.some((s) => s.id === first.session_id));
  });

  test("the Talk to a person button hands over as a typed request does", async () => {
    scriptModel();
    const owner = newOwner();
    const none = await ask(owner, "Where is the nearest volcano?");
    assert.equal(none.no_answer, true);
    assert.equal(none.handoff_offered, true);
    const handed = await call("POST", `/api/help/sessions/${none.session_id}/handoff`, { owner, body: {} });
    assert.equal(handed.status, 200);
    assert.equal(handed.json.status, "escalated");
    assert.equal(handed.json.escalation.reason, "requested");
    const typed = await ask(newOwner(), "Where is the nearest volcano? I want to talk to a person");
    assert.equal(typed.status, "escalated");
    const line = handed.json.messages.at(-1);
    assert.equal(line.role, "desk");
    assert.deepEqual([line.text, line.footer], [typed.reply, typed.footer]);
    const twice = await call("POST", `/api/help/sessions/${none.session_id}/handoff`, { owner, body: {} });
    assert.equal(twice.json.messages.length, handed.json.messages.length, "asking again changes nothing");
  });
});

describe("owners and input", () => {
  test("another owner cannot see, continue or hand off a session", async () => {
    scriptModel();
    const owner = newOwner();
    const mine = await ask(owner, "My research job failed");
    const stranger = newOwner();
    const read = await call("GET", `/api/help/sessions/${mine.session_id}`, { owner: stranger });
    assert.equal(read.status, 404);
    assert.equal(read.json.error.code, "help_session_not_found");
    const turn = await call("POST", "/api/help", { owner: stranger, body: { session_id: mine.session_id, message: "partial" } });
    assert.equal(turn.status, 404);
    assert.equal((await call("POST", `/api/help/sessions/${mine.session_id}/handoff`, { owner: stranger, body: {} })).status, 404);
    assert.equal((await call("GET", "/api/help/sessions/not-an-id", { owner })).status, 404);
    // An id no session has is not found either, exactly like another owner's: never created.
    const unknown = await call("POST", "/api/help", { owner: stranger, body: { session_id: newOwner(), message: "partial" } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, "help_session_not_found");
    const still = (await call("GET", `/api/help/sessions/${mine.session_id}`, { owner })).json;
    assert.equal(still.turns, 1);
    assert.equal((await call("DELETE", `/api/help/sessions/${mine.session_id}`, { owner: stranger })).status, 404);
    assert.equal((await call("DELETE", `/api/help/sessions/${mine.session_id}`, { owner })).status, 204);
    assert.equal((await call("GET", `/api/help/sessions/${mine.session_id}`, { owner })).status, 404, "deleted");
  });

  test("new sessions started one after another, on objects the Worker started ahead, each hold their own question alone", async () => {
    scriptModel();
    const owners = [newOwner(), newOwner()];
    const sessions = [];
    for (let i = 0; i < 6; i++) {
      const owner = owners[i % 2];
      const turn = await ask(owner, `Question ${i}: where is my export?`);
      sessions.push({ owner, id: turn.session_id, i });
      // Past the refill's wait (platform/warm.rs REFILL_AFTER_MS), so the next session can take
      // an object started after this one.
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(new Set(sessions.map((s) => s.id)).size, sessions.length, "every new session has an id of its own");
    for (const { owner, id, i } of sessions) {
      const session = (await call("GET", `/api/help/sessions/${id}`, { owner })).json;
      assert.equal(session.turns, 1, `session ${i}`);
      const asked = session.messages.filter((m) => m.role === "user").map((m) => m.text);
      assert.deepEqual(asked, [`Question ${i}: where is my export?`], `session ${i} holds its own question alone`);
      const other = owners.find((o) => o !== owner);
      assert.equal((await call("GET", `/api/help/sessions/${id}`, { owner: other })).status, 404);
    }
  });

  test("empty, overlong and malformed messages are refused before anything happens", async () => {
    const owner = newOwner();
    const empty = await call("POST", "/api/help", { owner, body: { message: "  " } });
    assert.equal(empty.status, 422);
    assert.equal(empty.json.error.code, "empty_message");
    const long = await call("POST", "/api/help", { owner, body: { message: "x".repeat(2001) } });
    assert.equal(long.status, 413);
    assert.equal(long.json.error.code, "message_too_long");
    const unknown = await call("POST", "/api/help", { owner, body: { message: "hi", colour: "red" } });
    assert.equal(unknown.status, 422);
    assert.equal((await call("POST", "/api/help", { owner: null, body: { message: "hi" }, headers: { authorization: "" } })).status, 401);
  });
});

// End-to-end tests of the help desk under `wrangler dev` with local D1 (the migrations'
// schema and starter knowledge base): article imports, BM25 ranking and hybrid search with a
// fake embeddings endpoint, clarification loops of two and three questions that never search
// while active, the translation call, the generation prompt the fake provider receives, the
// answer cache, generate-then-escalate with the signed webhook and the operator view, reloads
// mid-loop, a failed model call that changes nothing, and owner isolation.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { ADMIN_TOKEN, apiCaller, newOwner, startStack } from "./harness.mjs";

const WEBHOOK_SECRET = "help-webhook-secret";
let stack;

before(async () => {
  stack = await startStack({
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
    assert.equal(limited.question.text, "Which error code does the answer carry: rate_limited or quota_exceeded?");
    const none = await ask(newOwner(), "What is the capital of Mongolia?");
    assert.equal(none.no_answer, true);
    assert.match(none.reply, /could not find an answer/);
    assert.equal(none.doc, null);
  });

  test("hybrid search finds by vector what BM25 cannot, and BM25 alone answers when embeddings fail", async () => {
    scriptModel();
    const embeddings = stack.fake.embeddings;
    const found = await ask(newOwner(), "Tips for a striped horse?");
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
    assert.deepEqual(first.question, { number: 1, total: 2, text: "What status does the job show: partial or failed?" });
    assert.equal(first.search_calls, 1);
    assert.equal(modelCalls().length, before, "asking a question calls no model");
    const second = await ask(owner, "partial", first.session_id);
    assert.deepEqual(second.trace, ["guardrails", "router", "clarification"]);
    assert.equal(second.question.number, 2);
    const third = await ask(owner, "12", first.session_id);
    assert.deepEqual(third.trace, ["guardrails", "router", "clarification", "prompt_routing", "generation"]);
    assert.equal(third.search_calls, 1, "the loop never searched: \"12\" is an answer, not a query");
    assert.equal(third.dialog_state, "ANSWER_PROVIDED");
    assert.equal(third.reply, "Generated answer for: My research job failed");
    const prompt = modelCalls().at(-1).body.messages.filter((m) => m.role === "user").at(-1).content;
    assert.match(prompt, /^Context: A research job asks every selected provider/);
    assert.ok(prompt.includes("The user has provided the following details:\n- Question: What status does the job show: partial or failed? -> Answer: partial\n- Question: Which error code does the failed provider row show (timeout, rate_limited, auth, upstream_error or bad_stream)? -> Answer: 12\n\nUser Query: My research job failed"), prompt);
    const session = (await call("GET", `/api/help/sessions/${first.session_id}`, { owner })).json;
    assert.deepEqual(session.state.clarification_context.answers, {
      "What status does the job show: partial or failed?": "partial",
      "Which error code does the failed provider row show (timeout, rate_limited, auth, upstream_error or bad_stream)?": "12",
    });
    assert.equal(session.state.clarification_context.active, false);
    assert.equal(session.messages.length, 6);
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
  test("the answer comes first, then the session is escalated, announced and listed for operators", async () => {
    scriptModel();
    const owner = newOwner();
    const first = await ask(owner, "I want to erase all of my data and my account");
    assert.equal(first.question.text, "Which e-mail address does your sign-in use, if any?");
    assert.equal(first.status, "open");
    const answered = await ask(owner, "me@example.org", first.session_id);
    assert.match(answered.reply, /^Generated answer for:/);
    assert.equal(answered.footer, "Connecting you to an agent…");
    assert.equal(answered.dialog_state, "ESCALATED");
    assert.equal(answered.status, "escalated");
    const refused = await call("POST", "/api/help", { owner, body: { session_id: first.session_id, message: "hello?" } });
    assert.equal(refused.status, 409);
    assert.equal(refused.json.error.code, "session_escalated");

    const deadline = Date.now() + 15_000;
    let hook;
    while (!(hook = stack.fake.webhooks.find((w) => w.body.event?.session_id === first.session_id)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(hook, "the webhook got session.escalated");
    assert.equal(hook.body.type, "session.escalated");
    assert.equal(hook.body.event.reason, "article");
    assert.ok(!hook.raw.includes("me@example.org"), "the event carries no user text");
    const signature = createHmac("sha256", WEBHOOK_SECRET).update(hook.raw).digest("hex");
    assert.equal(hook.headers["x-stepwise-signature"], `sha256=${signature}`);

    assert.equal((await call("GET", "/api/help/escalations")).status, 403);
    const listed = (await call("GET", "/api/help/escalations", { headers: admin })).json;
    const entry = listed.items.find((s) => s.id === first.session_id);
    assert.ok(entry, "listed for operators");
    assert.equal(entry.messages.at(-1).footer, "Connecting you to an agent…");
    assert.equal(entry.state.clarification_context.answers["Which e-mail address does your sign-in use, if any?"], "me@example.org");
    const resolved = await call("POST", `/api/help/escalations/${first.session_id}/resolve`, { headers: admin });
    assert.equal(resolved.json.status, "resolved");
    const after = (await call("GET", "/api/help/escalations", { headers: admin })).json;
    assert.ok(!after.items.some((s) => s.id === first.session_id));
  });

  test("a user with no answer can ask for a person", async () => {
    scriptModel();
    const owner = newOwner();
    const none = await ask(owner, "Where is the nearest volcano?");
    assert.equal(none.no_answer, true);
    const handed = await call("POST", `/api/help/sessions/${none.session_id}/handoff`, { owner, body: {} });
    assert.equal(handed.status, 200);
    assert.equal(handed.json.status, "escalated");
    assert.equal(handed.json.escalation.reason, "requested");
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

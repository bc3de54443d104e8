// End-to-end tests of saved streams and the Articles search under `wrangler dev`: a confirmed
// guided conversation saved as a stream, its changes validated by the core, owner isolation,
// the search through the fake E-utilities (parameters, pages, faults), the stream's chat
// instructions in the assistant's prompt, and guided turns serialized on their object.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { apiCaller, newOwner, startStack } from "./harness.mjs";

let stack;

before(async () => {
  stack = await startStack({ overrides: { NCBI_API_KEY: "ncbi-test-key" } });
});
after(async () => {
  await stack?.stop();
});

const call = apiCaller(() => stack.base);

/** Walks the guided workflow with the offline provider up to `until` (`review` or `done`). */
async function guided(owner, until = "done") {
  const steps = [
    ["Track EGFR resistance research for our lung programme", null],
    ["Pipeline decisions, Partnering", null],
    ["scientific", { type: "option_selected", target_field: "stream_type", selected_value: "scientific" }],
    ["Continue", { type: "options_selected", target_field: "focus_areas", selected_values: ["Oncology"] }],
    ["Skip", { type: "skip_step", target_field: "competitors" }],
    ["EGFR, osimertinib", null],
    ["Looks good", { type: "confirm" }],
  ];
  let state = { current_config: {}, skipped: [] };
  let ids = {};
  for (const [message, action] of until === "done" ? steps : steps.slice(0, -1)) {
    const body = { message, provider: "offline", current_config: state.current_config, skipped: state.skipped, conversation_history: [] };
    if (state.next_step) body.current_step = state.next_step;
    if (action) body.user_action = action;
    if (ids.conversation_id) Object.assign(body, { conversation_id: ids.conversation_id, turns: state.turns });
    const headers = { accept: "application/json", ...(ids.token ? { "x-conversation-token": ids.token } : {}) };
    const { status, json } = await call("POST", "/api/chat", { owner, body, headers });
    assert.equal(status, 200, JSON.stringify(json));
    state = { next_step: json.next_step, current_config: json.updated_config, skipped: json.skipped, turns: json.turns };
    ids = { conversation_id: json.conversation_id, token: ids.token ?? json.conversation_token };
  }
  return { ...ids, state };
}

describe("saved streams", () => {
  test("a confirmed conversation becomes a stream; changes are validated, all or nothing", async () => {
    const owner = newOwner();
    const { conversation_id, token, state } = await guided(owner);
    assert.equal(state.next_step, "done");
    const saved = await call("POST", "/api/streams", { owner, body: { conversation_id }, headers: { "x-conversation-token": token } });
    assert.equal(saved.status, 201, saved.text);
    const stream = saved.json;
    assert.equal(stream.name, "Track EGFR resistance research for our lung programme");
    assert.deepEqual(stream.config.keywords, ["EGFR", "osimertinib"]);
    assert.equal(stream.default_query, "(EGFR OR osimertinib) AND (Oncology)");
    assert.equal(stream.owner, undefined);
    assert.deepEqual((await call("GET", "/api/streams", { owner })).json.items.map((i) => i.id), [stream.id]);

    const changed = await call("PUT", `/api/streams/${stream.id}`, { owner, body: { name: "Lung watch", chat_instructions: "Focus on resistance mechanisms.", edits: [{ field: "keywords", value: ["EGFR", "C797S"] }] } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual([changed.json.name, changed.json.config.keywords, changed.json.default_query], ["Lung watch", ["EGFR", "C797S"], "(EGFR OR C797S) AND (Oncology)"]);
    const refused = await call("PUT", `/api/streams/${stream.id}`, { owner, body: { name: "Never", edits: [{ field: "stream_type", value: "astrology" }] } });
    assert.deepEqual([refused.status, refused.json.error.code], [422, "invalid_value"]);
    const emptied = await call("PUT", `/api/streams/${stream.id}`, { owner, body: { edits: [{ field: "keywords", value: [] }] } });
    assert.deepEqual([emptied.status, emptied.json.error.code], [422, "selection_required"]);
    for (const body of [{ chat_instructions: "x".repeat(4001) }, { name: "a\nb" }, { owner: "me" }]) {
      assert.equal((await call("PUT", `/api/streams/${stream.id}`, { owner, body })).status, 422, JSON.stringify(body).slice(0, 40));
    }
    const now = (await call("GET", `/api/streams/${stream.id}`, { owner })).json;
    assert.deepEqual([now.name, now.config.stream_type, now.chat_instructions], ["Lung watch", "scientific", "Focus on resistance mechanisms."]);

    const other = newOwner();
    for (const [method, body] of [["GET"], ["PUT", { name: "x" }], ["DELETE"]]) {
      const response = await call(method, `/api/streams/${stream.id}`, { owner: other, body });
      assert.deepEqual([response.status, response.json.error.code], [404, "not_found"]);
    }
    const stolen = await call("POST", "/api/streams", { owner: other, body: { conversation_id }, headers: { "x-conversation-token": token } });
    assert.equal(stolen.status, 404);
    assert.equal((await call("DELETE", `/api/streams/${stream.id}`, { owner })).status, 204);
    assert.equal((await call("GET", `/api/streams/${stream.id}`, { owner })).status, 404);
    assert.deepEqual((await call("GET", "/api/streams", { owner })).json.items, []);
  });

  test("an unconfirmed conversation cannot be saved", async () => {
    const owner = newOwner();
    const { conversation_id, token, state } = await guided(owner, "review");
    assert.equal(state.next_step, "review");
    const early = await call("POST", "/api/streams", { owner, body: { conversation_id }, headers: { "x-conversation-token": token } });
    assert.deepEqual([early.status, early.json.error.code], [409, "not_confirmed"]);
    const tokenless = await call("POST", "/api/streams", { owner, body: { conversation_id } });
    assert.equal(tokenless.status, 403);
  });

  test("the stream's chat instructions and the page's context reach the assistant's prompt", async () => {
    const owner = newOwner();
    const { conversation_id, token } = await guided(owner);
    const stream = (await call("POST", "/api/streams", { owner, body: { conversation_id }, headers: { "x-conversation-token": token } })).json;
    const instructions = "Always name the trial phase. Questions to lead@example.com.";
    await call("PUT", `/api/streams/${stream.id}`, { owner, body: { chat_instructions: instructions } });
    stack.fake.script({ reply: "Noted." });
    const context = {
      current_page: "streams", active_tab: "settings", stream_id: stream.id,
      stream: { name: stream.name, config: stream.config, chat_instructions: instructions },
    };
    const turn = await call("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body: { message: "Hello", context } });
    assert.equal(turn.status, 200, turn.text);
    const system = stack.fake.requests.at(-1).system;
    assert.match(system, /The Settings tab: the stream's configuration/);
    assert.match(system, /STREAM_CONFIG_SUGGESTION - /);
    assert.ok(!system.includes("QUERY_SUGGESTION -"), "the Articles tab's payloads are not offered on Settings");
    // The stream's instructions close the page's prompt; the context bundle (context-handshake.md) follows.
    assert.match(system, /## Instructions for this stream\nAlways name the trial phase\. Questions to \[redacted e-mail\]\.\n\n## Writing style\n/);
    assert.match(system, /## The user's guidance\n[^#]*Instructions: Always name the trial phase\. Questions to \[redacted e-mail\]\./);
    // What the owner wrote reaches the model redacted, wherever it appears (screen state too).
    assert.ok(!system.includes("lead@example.com"), system);
  });
});

describe("articles", () => {
  test("a search pages through PubMed's results with dates and order; abstracts by PMID", async () => {
    const since = stack.fake.eutils.requests.length;
    const page = await call("GET", "/api/articles/search?query=EGFR%20resistance&mindate=2020&maxdate=2023&sort=date&page=2&per_page=5");
    assert.equal(page.status, 200, page.text);
    assert.deepEqual([page.json.page, page.json.per_page, page.json.sort, page.json.mindate, page.json.maxdate], [2, 5, "date", "2020", "2023"]);
    assert.ok(page.json.count > 5);
    assert.equal(page.json.articles.length, 5);
    assert.ok(page.json.articles.every((a) => a.year >= 2020 && a.year <= 2023 && a.title && a.journal && a.authors.length));
    const [esearch, esummary] = stack.fake.eutils.requests.slice(since);
    assert.equal(esearch.path, "/eutils/esearch.fcgi");
    assert.deepEqual(
      [esearch.params.term, esearch.params.retstart, esearch.params.retmax, esearch.params.sort, esearch.params.datetype, esearch.params.api_key, esearch.params.retmode],
      ["EGFR resistance", "5", "5", "pub_date", "pdat", "ncbi-test-key", "json"],
    );
    assert.equal(esummary.params.id, page.json.articles.map((a) => a.pmid).join(","));
    const abstracts = await call("GET", `/api/articles/abstracts?ids=${page.json.articles[0].pmid},39000002`);
    assert.equal(abstracts.status, 200);
    assert.match(abstracts.json.articles[0].text, /^BACKGROUND: .*\nRESULTS: .* \(p < 0\.05\) & more\.$/);
    const none = await call("GET", "/api/articles/search?query=zzzznothing");
    assert.deepEqual([none.json.count, none.json.articles], [0, []]);
  });

  test("bad parameters are refused before any request; upstream faults are errors, never made-up articles", async () => {
    const since = stack.fake.eutils.requests.length;
    for (const query of ["query=", "query=x&mindate=2020-13", "query=x&mindate=2024&maxdate=2020", "query=x&sort=popular", "query=x&per_page=51", "query=x&page=0", "query=x&page=two"]) {
      const response = await call("GET", `/api/articles/search?${query}`);
      assert.equal(response.status, 422, query);
    }
    for (const ids of ["", "1,abc", Array.from({ length: 51 }, (_, i) => i + 1).join(",")]) {
      assert.equal((await call("GET", `/api/articles/abstracts?ids=${ids}`)).status, 422, ids);
    }
    assert.equal(stack.fake.eutils.requests.length, since);
    stack.fake.eutils.fault = { status: 429 };
    try {
      const limited = await call("GET", "/api/articles/search?query=EGFR");
      assert.deepEqual([limited.status, limited.json.error.code], [502, "upstream_error"]);
      stack.fake.eutils.fault = { down: true };
      const down = await call("GET", "/api/articles/search?query=EGFR");
      assert.deepEqual([down.status, down.json.error.code], [502, "upstream_unreachable"]);
    } finally {
      stack.fake.eutils.fault = null;
    }
    assert.equal((await call("GET", "/api/articles/search?query=EGFR", { headers: { authorization: "" } })).status, 401);
  });
});

describe("guided turns on the conversation's object", () => {
  test("a turn that builds on a stale count of turns is refused, so two tabs never lose a turn", async () => {
    const owner = newOwner();
    const first = (await call("POST", "/api/chat", { owner, headers: { accept: "application/json" }, body: { message: "Track rivals", provider: "offline", current_config: {} } })).json;
    const headers = { accept: "application/json", "x-conversation-token": first.conversation_token };
    const body = { conversation_id: first.conversation_id, turns: first.turns, message: "Launches", provider: "offline", current_step: first.next_step, current_config: first.updated_config };
    const tabA = await call("POST", "/api/chat", { owner, headers, body });
    assert.equal(tabA.status, 200);
    const tabB = await call("POST", "/api/chat", { owner, headers, body });
    assert.deepEqual([tabB.status, tabB.json.error.code], [409, "stale_turn"]);
    const missing = await call("POST", "/api/chat", { owner, headers, body: { ...body, turns: undefined } });
    assert.deepEqual([missing.status, missing.json.error.code], [422, "invalid_request"]);
    const saved = await call("GET", `/api/conversations/${first.conversation_id}`, { owner, headers });
    assert.equal(saved.json.turns, 2);
  });
});

// End-to-end tests of the assistant under `wrangler dev`: the fake provider scripts tool calls in
// all three wire formats (split at awkward points, arguments in pieces) and the fake E-utilities
// answer the searches. Every event type in order, tool progress, what goes back to the model,
// payload validation, suggestions, server actions, persistence and resume, 409 on concurrent
// turns, the loop's bounds, and owner isolation.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SECRET_KEY, apiCaller, fakeProvider, newOwner, parseSse, startStack } from "./harness.mjs";

let stack;
const bodies = [];

before(async () => {
  stack = await startStack({
    providers: (url) => [...["openai", "anthropic", "gemini"].map((kind) => fakeProvider(url, `fake-${kind}`, kind)), { name: "offline", kind: "offline" }],
    overrides: { ASSISTANT_MAX_ITERATIONS: "3", TOOL_TIMEOUT_MS: "3000" },
  });
});
after(async () => {
  await stack?.stop();
  for (const body of bodies) assert.ok(!body.includes(SECRET_KEY), "the provider key leaked");
});

const ARTICLES = { current_page: "streams", active_tab: "articles", search_form: { query: "" } };

const call = apiCaller(() => stack.base, bodies);

/** An assistant turn over SSE: the response and its events. */
async function turn(body, { owner, headers = {} } = {}) {
  const response = await call("POST", "/api/assistant", { body, owner, headers: { accept: "text/event-stream", ...headers } });
  return { ...response, events: response.status === 200 ? parseSse(response.text) : [] };
}

const complete = (events) => events.at(-1).data.payload;

/** Scripts a model that searches first, then answers with a query suggestion and chips. */
function searchThenSuggest() {
  stack.fake.script((request) => {
    const replied = JSON.stringify(request.body).includes("articles found");
    if (!replied) return { reply: "Let me search PubMed.", toolCalls: [{ name: "search_pubmed", arguments: { query: "EGFR resistance", max_results: 5 } }] };
    return {
      reply: 'I found articles. Here is a sharper query:\nQUERY_SUGGESTION: {"query": "EGFR[MeSH] AND resistance[Title/Abstract]", "explanation": "MeSH for EGFR"}\nSUGGESTED_VALUES: [{"label": "Only recent", "value": "Only since 2020"}]\nSUGGESTED_ACTIONS: [{"label": "Research it", "action": "start_research", "handler": "server", "target": "EGFR resistance mechanisms"}, {"label": "Fly", "action": "fly_away", "handler": "client"}]\n',
    };
  });
}

describe("tool calls in every wire format", () => {
  for (const kind of ["openai", "anthropic", "gemini"]) {
    test(`${kind}: every event in order, progress, results back to the model in its own format`, async () => {
      searchThenSuggest();
      const since = stack.fake.requests.length;
      const searches = stack.fake.eutils.requests.length;
      const { status, events } = await turn({ message: "Find EGFR resistance articles", context: ARTICLES, provider: `fake-${kind}` });
      assert.equal(status, 200);
      const types = events.map((e) => e.event);
      assert.equal(types[0], "status");
      const start = types.indexOf("tool_start");
      assert.ok(types.slice(1, start).every((t) => t === "text_delta"), types.join());
      assert.deepEqual(events[start].data, { type: "tool_start", tool: "search_pubmed", input: { query: "EGFR resistance", max_results: 5 } });
      const progress = events.filter((e) => e.event === "tool_progress").map((e) => e.data);
      assert.deepEqual(progress.map((p) => p.stage), ["searching", "fetching_summaries", "done"]);
      assert.ok(progress.every((p) => p.tool === "search_pubmed" && p.message && p.progress > 0 && p.progress <= 1));
      const done = types.indexOf("tool_complete");
      assert.deepEqual(events[done].data, { type: "tool_complete", tool: "search_pubmed", index: 0 });
      assert.ok(done > start && types.at(-1) === "complete" && types.slice(done + 1, -1).every((t) => t === "text_delta"));
      // Ids are the turn's log sequence numbers: they only grow (a client is not sent the
      // deltas that hold no display text, so numbers may be skipped).
      const ids = events.map((e) => Number(e.id));
      assert.ok(ids.every((id, i) => Number.isSafeInteger(id) && (i === 0 || id > ids[i - 1])), `ids grow: ${ids}`);
      const shown = events.filter((e) => e.event === "text_delta").map((e) => e.data.text).join("");
      assert.ok(!/QUERY_SUGGESTION|SUGGESTED_/.test(shown), "no marker syntax is shown");

      const payload = complete(events);
      assert.equal(payload.custom_payload.type, "query_suggestion");
      assert.equal(payload.custom_payload.data.query, "EGFR[MeSH] AND resistance[Title/Abstract]");
      const results = payload.payloads.find((p) => p.type === "pubmed_search_results");
      assert.equal(results.data.articles.length, 5);
      assert.match(results.data.articles[0].pmid, /^390000\d\d$/);
      assert.deepEqual(payload.suggested_values, [{ label: "Only recent", value: "Only since 2020" }]);
      assert.deepEqual(payload.suggested_actions.map((a) => a.action), ["start_research"]);
      assert.ok(payload.diagnostics.some((d) => d.code === "unknown_action" && d.message.includes("fly_away")));
      assert.equal(payload.tool_history[0].tool_name, "search_pubmed");
      assert.match(payload.tool_history[0].output, /^PubMed search "EGFR resistance": \d+ articles found; the first 5:/);
      assert.match(payload.conversation_id, /^[0-9a-f]{32}$/);
      assert.equal(stack.fake.eutils.requests.length - searches, 2, "esearch then esummary");

      const [first, second] = stack.fake.requests.slice(since);
      const names = (body) => JSON.stringify(body.tools);
      assert.ok(names(first.body).includes("search_pubmed") && names(first.body).includes("retrieve_items"));
      assert.ok(!names(first.body).includes("compare_reports"), "compare_reports is the research page's");
      const sent = JSON.stringify(second.body);
      if (kind === "openai") {
        const tool = second.body.messages.find((m) => m.role === "tool");
        assert.equal(tool.tool_call_id, "call_fake_0");
        assert.match(tool.content, /PubMed search/);
      } else if (kind === "anthropic") {
        const results = second.body.messages.at(-1).content;
        assert.equal(results[0].type, "tool_result");
        assert.equal(results[0].tool_use_id, "toolu_fake_0");
      } else {
        assert.ok(sent.includes('"functionResponse"') && sent.includes('"name":"search_pubmed"'));
      }
      assert.match(second.system, /## Payloads you can return[\s\S]*QUERY_SUGGESTION/);
      assert.match(second.system, /## Tools\n/);
    });
  }

  test("JSON mode answers the same payload alone", async () => {
    searchThenSuggest();
    const response = await call("POST", "/api/assistant", { body: { message: "Find EGFR resistance articles", context: ARTICLES }, headers: { accept: "application/json" } });
    assert.equal(response.status, 200);
    assert.equal(response.json.custom_payload.type, "query_suggestion");
    assert.equal(response.headers.get("x-stepwise-persisted"), "true");
  });

  test("model deltas carry the model's own text for clients that parse markers", async () => {
    searchThenSuggest();
    const { events } = await turn({ message: "Find EGFR", context: ARTICLES }, { headers: { "x-stepwise-deltas": "model" } });
    const raw = events.filter((e) => e.event === "model_delta").map((e) => e.data.text).join("");
    assert.match(raw, /\nQUERY_SUGGESTION: \{"query"/);
    assert.ok(!events.some((e) => e.event === "text_delta"));
  });
});

describe("retrieve_items", () => {
  test("full details by id: abstracts by PMID, the caller's own jobs (redacted), a clear line for the rest", async () => {
    const owner = newOwner();
    const draft = await call("POST", "/api/research/draft", { owner, body: { prompt: "Compare EGFR inhibitors; questions to ann@lab.org", selected_llms: ["fake-openai"], synthesis_llm: "fake-openai" } });
    assert.equal(draft.status, 201, draft.text);
    const strangers = await call("POST", "/api/research/draft", { owner: newOwner(), body: { prompt: "Someone else's question", selected_llms: ["fake-openai"], synthesis_llm: "fake-openai" } });
    const ids = ["39000002", "39999999", draft.json.id, strangers.json.id, "nope"];
    stack.fake.script((request) =>
      JSON.stringify(request.body).includes("PMID 39000002")
        ? { reply: "Here are the details." }
        : { reply: "", toolCalls: [{ name: "retrieve_items", arguments: { ids } }] },
    );
    const { events } = await turn({ message: "Tell me more about these", context: { ...ARTICLES, item_summaries: [{ pmid: "39000002", title: "Fixture study 2" }] } }, { owner });
    const history = complete(events).tool_history;
    assert.deepEqual(history.map((h) => [h.tool_name, Boolean(h.is_error)]), [["retrieve_items", false]]);
    const output = history[0].output;
    assert.match(output, /PMID 39000002 — Fixture study 2: [^\n]+\(Fixture [^,]+, 20\d\d\)\nBACKGROUND/);
    assert.match(output, /PMID 39999999: PubMed has no such article\./);
    // The job by its id, whole; what people wrote in it, redacted.
    assert.match(output, new RegExp(`Research ${draft.json.id} "[^"]*" \\(draft\\): Compare EGFR inhibitors; questions to \\[redacted e-mail\\]`));
    assert.ok(!output.includes("ann@lab.org"));
    assert.ok(!output.includes("Someone else's question"), "another owner's job is not read");
    assert.match(output, new RegExp(`${strangers.json.id}: no such item`));
    assert.match(output, /nope: no such item \(ids are PMIDs or research job ids\)\./);
    assert.ok(events.some((e) => e.event === "tool_progress" && e.data.stage === "fetching_abstracts"), JSON.stringify(events.map((e) => e.event)));
    assert.equal(complete(events).message, "Here are the details.");
  });
});

describe("the loop's rules", () => {
  test("an unknown tool, invalid arguments and a failing tool become error results the model reads", async () => {
    stack.fake.eutils.fault = { status: 500 };
    stack.fake.script((request) =>
      JSON.stringify(request.body).includes("error:")
        ? { reply: "Those did not work." }
        : {
            reply: "",
            toolCalls: [
              { name: "delete_everything", arguments: {} },
              { name: "search_pubmed", arguments: { query: "" } },
              { name: "search_pubmed", arguments: '{"query": "EGFR"' },
              { name: "search_pubmed", arguments: { query: "EGFR" } },
            ],
          },
    );
    try {
      const { events } = await turn({ message: "go", context: ARTICLES });
      const history = complete(events).tool_history;
      assert.deepEqual(history.map((h) => h.is_error), [true, true, true, true]);
      assert.match(history[0].output, /^error: there is no tool `delete_everything` here; available: search_pubmed, /);
      assert.equal(history[1].output, "error: invalid arguments: $.query: shorter than 1 characters");
      assert.equal(history[2].output, "error: the arguments are not a JSON object");
      assert.equal(history[3].output, "error: upstream_error: PubMed answered 500");
      // Only the valid call ran, so only it has start and complete events.
      assert.deepEqual(events.filter((e) => e.event === "tool_start").map((e) => e.data.input), [{ query: "EGFR" }]);
      assert.equal(complete(events).message, "Those did not work.");
    } finally {
      stack.fake.eutils.fault = null;
    }
  });

  test("the iteration bound: the last call forbids tools and the turn still answers", async () => {
    const since = stack.fake.requests.length;
    stack.fake.script(() => ({ reply: "Again.", toolCalls: [{ name: "list_research", arguments: {} }] }));
    const { events } = await turn({ message: "loop", context: { current_page: "research" } });
    const requests = stack.fake.requests.slice(since);
    assert.equal(requests.length, 3, "ASSISTANT_MAX_ITERATIONS=3");
    assert.deepEqual(requests.map((r) => r.body.tool_choice ?? null), [null, null, "none"]);
    const payload = complete(events);
    assert.equal(payload.tool_history.length, 2);
    assert.ok(payload.diagnostics.some((d) => d.code === "tool_call_ignored"));
  });

  test("an invalid model payload becomes a diagnostic, never a card", async () => {
    stack.fake.script({ reply: 'Here:\nQUERY_SUGGESTION: {"q": 1}\nFILTER_SUGGESTION: {"sort": "random"}\n' });
    const { events } = await turn({ message: "x", context: ARTICLES });
    const payload = complete(events);
    assert.equal(payload.custom_payload, undefined);
    assert.deepEqual(payload.diagnostics.map((d) => d.code), ["invalid_payload", "invalid_payload"]);
    assert.match(payload.diagnostics[0].message, /^`query_suggestion` dropped: \$: `query` is required/);
  });

  test("a payload the page does not allow stays text, and a provider failure ends the turn with an error", async () => {
    stack.fake.script({ reply: 'STREAM_CONFIG_SUGGESTION: {"edits": []}\n' });
    const { events } = await turn({ message: "x", context: ARTICLES });
    assert.equal(complete(events).custom_payload, undefined);
    assert.match(complete(events).message, /STREAM_CONFIG_SUGGESTION/);
    stack.fake.script({ status: 500 });
    const failed = await turn({ message: "x", context: ARTICLES });
    assert.deepEqual(failed.events.at(-1).data, { type: "error", code: "upstream_error", message: failed.events.at(-1).data.message });
  });
});

describe("conversations", () => {
  test("persisted with tools and payloads, listed newest first, resumed, deleted", async () => {
    const owner = newOwner();
    searchThenSuggest();
    const first = complete((await turn({ message: "Find EGFR resistance articles", context: ARTICLES }, { owner })).events);
    stack.fake.script((request) => ({ reply: `You said: ${request.body.messages?.at(-1)?.content ?? "?"}` }));
    const second = complete((await turn({ conversation_id: first.conversation_id, message: "Thanks", context: ARTICLES }, { owner })).events);
    assert.equal(second.conversation_id, first.conversation_id);
    const read = await call("GET", `/api/assistant/conversations/${first.conversation_id}`, { owner });
    assert.equal(read.status, 200);
    assert.equal(read.json.turns, 2);
    assert.equal(read.json.title, "Find EGFR resistance articles");
    assert.deepEqual(read.json.messages.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
    assert.equal(read.json.messages[0].page, "streams");
    assert.equal(read.json.messages[1].tool_history[0].tool_name, "search_pubmed");
    assert.deepEqual(read.json.messages[1].payloads.map((p) => p.type), ["pubmed_search_results", "query_suggestion"]);
    assert.ok(read.json.messages.every((m) => m.at > 0));
    const { json: list } = await call("GET", "/api/assistant/conversations", { owner });
    assert.deepEqual(list.items.map((i) => i.id), [first.conversation_id]);
    assert.equal(list.items[0].turns, 2);
    // The model saw the first turn on the second (history, with the tools it used).
    const last = stack.fake.requests.at(-1).body;
    assert.ok(JSON.stringify(last.messages).includes("(tools used: search_pubmed)"));
    assert.equal((await call("DELETE", `/api/assistant/conversations/${first.conversation_id}`, { owner })).status, 204);
    assert.equal((await call("GET", `/api/assistant/conversations/${first.conversation_id}`, { owner })).status, 404);
  });

  test("a JSON turn while one runs gets 409 turn_in_progress (a streamed one waits: live.test.mjs); nothing is lost", async () => {
    const owner = newOwner();
    stack.fake.script({ reply: "First." });
    const first = complete((await turn({ message: "one", context: ARTICLES }, { owner })).events);
    stack.fake.script({ reply: "A slow answer, ".repeat(20), delayMs: 40 });
    const slow = turn({ conversation_id: first.conversation_id, message: "two", context: ARTICLES }, { owner });
    await new Promise((r) => setTimeout(r, 400));
    const busy = await call("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body: { conversation_id: first.conversation_id, message: "three", context: ARTICLES } });
    assert.deepEqual([busy.status, busy.json.error.code], [409, "turn_in_progress"]);
    assert.equal((await slow).status, 200);
    const read = await call("GET", `/api/assistant/conversations/${first.conversation_id}`, { owner });
    assert.deepEqual(read.json.messages.filter((m) => m.role === "user").map((m) => m.content), ["one", "two"]);
  });

  test("a failed first turn keeps no conversation", async () => {
    const owner = newOwner();
    stack.fake.script({ status: 500 });
    await turn({ message: "lost", context: ARTICLES }, { owner });
    assert.deepEqual((await call("GET", "/api/assistant/conversations", { owner })).json.items, []);
  });

  test("owners are isolated: another owner's conversation or stream does not exist for them", async () => {
    const owner = newOwner();
    stack.fake.script({ reply: "Mine." });
    const mine = complete((await turn({ message: "mine", context: ARTICLES }, { owner })).events);
    const other = newOwner();
    for (const [method, path] of [["GET", `/api/assistant/conversations/${mine.conversation_id}`], ["DELETE", `/api/assistant/conversations/${mine.conversation_id}`]]) {
      const response = await call(method, path, { owner: other });
      assert.deepEqual([response.status, response.json.error.code], [404, "conversation_not_found"]);
    }
    const cont = await call("POST", "/api/assistant", { owner: other, body: { conversation_id: mine.conversation_id, message: "hi", context: ARTICLES } });
    assert.deepEqual([cont.status, cont.json.error.code], [404, "conversation_not_found"]);
    const claim = await call("POST", "/api/assistant", { owner: other, body: { conversation_id: "ab".repeat(16), message: "hi", context: ARTICLES } });
    assert.equal(claim.status, 404);
    const stream = await call("POST", "/api/assistant", { owner: other, body: { message: "hi", context: { ...ARTICLES, stream_id: "cd".repeat(16) } } });
    assert.equal(stream.status, 404);
    assert.deepEqual((await call("GET", "/api/assistant/conversations", { owner: other })).json.items, []);
  });

  test("bad input is refused before any model call", async () => {
    const since = stack.fake.requests.length;
    const refused = async (body, code) => {
      const response = await call("POST", "/api/assistant", { body });
      assert.deepEqual([response.status, response.json.error.code], [422, code], JSON.stringify(body));
    };
    await refused({ message: " ", context: ARTICLES }, "invalid_request");
    await refused({ message: "x".repeat(8001), context: ARTICLES }, "invalid_request");
    await refused({ message: "x", context: { active_tab: "articles" } }, "invalid_context");
    await refused({ message: "x", context: { current_page: "streams", item_summaries: [1, 2] } }, "invalid_context");
    await refused({ message: "x", context: ARTICLES, extra: true }, "invalid_request");
    await refused({ message: "x", context: ARTICLES, provider: "nope" }, "unknown_provider");
    assert.equal(stack.fake.requests.length, since);
    const registry = await fetch(`${stack.base}/api/assistant/registry`);
    assert.equal(registry.status, 200);
    assert.ok((await registry.json()).pages.some((p) => p.page === "streams"));
  });
});

describe("server actions", () => {
  test("start_research creates a draft and answers as a turn with a way to open it", async () => {
    const owner = newOwner();
    stack.fake.script({ reply: "A title" });
    const { status, events } = await (async () => {
      const response = await call("POST", "/api/assistant/actions", {
        owner,
        headers: { accept: "text/event-stream" },
        body: { action: "start_research", label: "Research it", target: "How do EGFR inhibitors lose efficacy?", context: { current_page: "research" } },
      });
      return { ...response, events: parseSse(response.text) };
    })();
    assert.equal(status, 200);
    assert.deepEqual(events.map((e) => e.event), ["status", "text_delta", "complete"]);
    const payload = complete(events);
    const open = payload.suggested_actions[0];
    assert.deepEqual([open.action, open.handler], ["open_research", "client"]);
    const job = await call("GET", `/api/research/${open.target}`, { owner });
    assert.equal(job.status, 200);
    assert.equal(job.json.prompt, "How do EGFR inhibitors lose efficacy?");
    assert.equal(job.json.status, "draft");
    const read = await call("GET", `/api/assistant/conversations/${payload.conversation_id}`, { owner });
    assert.equal(read.json.messages[0].action, "start_research");
    const unknown = await call("POST", "/api/assistant/actions", { owner, body: { action: "launch_rockets", context: { current_page: "research" } } });
    assert.deepEqual([unknown.status, unknown.json.error.code], [422, "invalid_request"]);
    const missing = await call("POST", "/api/assistant/actions", { owner, headers: { accept: "application/json" }, body: { action: "start_research", context: { current_page: "research" } } });
    assert.deepEqual([missing.status, missing.json.error.code], [422, "invalid_request"]);
  });

  test("the research tools see only the caller's jobs; compare_reports compares two reports", async () => {
    const owner = newOwner();
    stack.fake.script((request) => {
      if (request.kind === "openai" && request.body.tools) {
        return JSON.stringify(request.body).includes("Only fake-")
          ? { reply: "Compared." }
          : { reply: "", toolCalls: [{ name: "compare_reports", arguments: { research_id: request.body.messages.at(-1).content } }] };
      }
      return { reply: `The ${request.kind} report: heat pumps suit insulated houses well.` };
    });
    const draft = await call("POST", "/api/research/draft", { owner, body: { prompt: "Heat pumps?", selected_llms: ["fake-anthropic", "fake-gemini"], synthesis_llm: "fake-openai" } });
    const id = draft.json.id;
    await call("POST", "/api/research", { owner, body: { research_id: id } });
    for (let i = 0; i < 100; i++) {
      if ((await call("GET", `/api/research/${id}`, { owner })).json.status === "completed") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const { events } = await turn({ message: id, context: { current_page: "research", report_id: id } }, { owner });
    const history = complete(events).tool_history;
    assert.equal(history[0].tool_name, "compare_reports");
    assert.match(history[0].output, /^Reports of fake-anthropic and fake-gemini for "/);
    const stranger = await turn({ message: id, context: { current_page: "research", report_id: id } }, { owner: newOwner() });
    assert.equal(complete(stranger.events).tool_history[0].output, "error: not_found: research not found");
  });
});

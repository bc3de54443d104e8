// End-to-end tests of the MCP endpoint (issue 33) under `wrangler dev`, driven by the
// official TypeScript client (`@modelcontextprotocol/sdk`'s `Client` over
// `StreamableHTTPClientTransport`), which checks every answer against the protocol's schemas:
// initialize and version negotiation, tools and resources listed, each read-only tool, a
// stranger's token, bad arguments and unknown tools as JSON-RPC errors, a missing resource, and
// the HTTP edges (no token, another site's page, an unsupported protocol version, a batch, GET);
// research_start's approval through elicitation (approved with progress, declined, dismissed,
// cancelled, a client without the capability), help_ask's clarifying questions (asked through
// elicitation, declined and answered later, a handoff), guided_configure's forms (walked to the
// end with a refused answer asked again, stopped), sessions (another owner's, ended). The kill switch and the
// rate limit have a stack of their own.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { apiCaller, fakeProvider, newOwner, startStack } from "./harness.mjs";
import { completedJob, savedStream } from "./fixtures.mjs";

/** A connected MCP client of `owner` (the owner token as a bearer token); with `answer`, it
 * declares elicitation and answers each question with `answer(request)`. */
async function connect(base, owner, answer) {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${owner}` } },
  });
  const client = new Client({ name: "stepwise-e2e", version: "1.0.0" }, answer ? { capabilities: { elicitation: {} } } : {});
  if (answer) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request));
  await client.connect(transport);
  client.transportOf = transport;
  return client;
}

/** A raw POST of `body` to /mcp as `owner`. */
async function post(base, owner, body, headers = {}) {
  const response = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${owner}`, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : null };
}

/** A client like `connect`'s whose first stream answering a `tools/call` of `tool` is cut
 * after the chunk that carries `marker`, as a network would: the client then resumes on its own,
 * and `resumed` lists the GETs that resumed a stream. */
async function connectCutting(base, owner, tool, marker, answer) {
  const resumed = [];
  let wrapped = false;
  let dropped = false;
  const cutting = async (url, init = {}) => {
    const response = await fetch(url, init);
    const lastEventId = new Headers(init.headers).get("last-event-id");
    if ((init.method ?? "GET") === "GET" && lastEventId) resumed.push({ status: response.status, lastEventId });
    const isCall = typeof init.body === "string" && init.body.includes(`"${tool}"`);
    if (!isCall || wrapped || !response.headers.get("content-type")?.startsWith("text/event-stream")) return response;
    wrapped = true;
    const reader = response.body.getReader();
    const body = new ReadableStream({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value);
        if (new TextDecoder().decode(value).includes(marker)) {
          dropped = true;
          await reader.cancel();
          controller.error(new TypeError("network connection lost"));
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${owner}` } },
    fetch: cutting,
    reconnectionOptions: { initialReconnectionDelay: 300, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
  });
  const client = new Client({ name: "stepwise-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, answer);
  // The cut is reported to the client's error handler; the call goes on.
  client.onerror = () => {};
  await client.connect(transport);
  return { client, transport, resumed, cut: () => dropped };
}

/** Answers guided_configure's forms as a person filling the built-in workflow would, noting
 * each form in `forms` (the first business goals over the step's limit of 10). */
function fillForms(forms) {
  return (request, extra) => {
    const { message, requestedSchema } = request.params;
    forms.push({ message, properties: requestedSchema.properties, id: extra?.requestId });
    const properties = requestedSchema.properties;
    if (properties.confirm) return { action: "accept", content: { confirm: true } };
    if (properties.skip) return { action: "accept", content: { skip: true } };
    const value = properties.value;
    if (value.enum) return { action: "accept", content: { value: value.enum[0] } };
    if (value.type === "array") return { action: "accept", content: { value: [value.items.enum[0]] } };
    if (/goals/i.test(value.title) && !/refused/.test(message)) {
      return { action: "accept", content: { value: Array.from({ length: 11 }, (_, i) => `goal ${i}`).join(", ") } };
    }
    if (/several values/i.test(value.description ?? "")) return { action: "accept", content: { value: "EGFR, osimertinib" } };
    return { action: "accept", content: { value: "Track EGFR resistance research" } };
  };
}

/** The fake provider's answers for this suite: a title, reports, and the synthesis. */
function defaultScript(request) {
  const text = JSON.stringify(request.body);
  if (request.system?.startsWith("You name")) return { reply: "EGFR review" };
  if (text.includes("=== Source")) return { reply: "Synthesis: the reports agree on 80 mg.\n" };
  return { reply: "Provider report: EGFR inhibitors at 80 mg." };
}

describe("the MCP endpoint", () => {
  let stack;
  const owner = newOwner();
  let job;
  let stream;
  let client;
  before(async () => {
    stack = await startStack({
      providers: (url) => [fakeProvider(url, "fake-openai", "openai"), fakeProvider(url, "fake-anthropic", "anthropic"), { name: "offline", kind: "offline" }],
    });
    stack.fake.script(defaultScript);
    const call = apiCaller(() => stack.base);
    job = await completedJob(call, owner, { prompt: "Compare EGFR inhibitors", selected_llms: ["fake-openai", "fake-anthropic"], synthesis_llm: "fake-openai" });
    stream = await savedStream(call, owner);
    client = await connect(stack.base, owner);
  });
  after(async () => {
    await client?.close();
    await stack?.stop();
  });

  test("initialize negotiates the version and names the server and its capabilities", async () => {
    assert.equal(client.getServerVersion().name, "stepwise");
    const capabilities = client.getServerCapabilities();
    assert.ok(capabilities.tools && capabilities.resources, JSON.stringify(capabilities));
    const old = await post(stack.base, owner, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "old", version: "0" } } });
    assert.equal(old.json.result.protocolVersion, "2025-11-25", "an unknown version is answered with the newest");
    const known = await post(stack.base, owner, { jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "0" } } });
    assert.equal(known.json.result.protocolVersion, "2025-06-18");
    await client.ping();
  });

  test("tools and resources are listed", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["guided_configure", "help_ask", "research_result", "research_start", "research_status", "stream_articles"]);
    for (const tool of tools) assert.equal(tool.inputSchema.type, "object");
    const { resources } = await client.listResources();
    const reports = job.llm_results.map((r) => `stepwise://research/${job.id}/reports/${r.provider}`);
    assert.deepEqual(resources.map((r) => r.uri), [`stepwise://research/${job.id}/synthesis`, ...reports]);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.equal(resourceTemplates.length, 2);
  });

  test("each tool answers for the owner's own things", async () => {
    const status = await client.callTool({ name: "research_status", arguments: { research_id: job.id } });
    assert.equal(status.isError, undefined);
    assert.equal(status.structuredContent.status, "completed");
    assert.deepEqual(status.structuredContent.providers.map((p) => p.status), ["completed", "completed"]);
    assert.match(status.content[0].text, /is completed/);

    const result = await client.callTool({ name: "research_result", arguments: { research_id: job.id } });
    assert.equal(result.structuredContent.synthesis, job.synthesized_result);
    assert.match(result.content[0].text, /Synthesis: the reports agree on 80 mg/);
    const links = result.content.filter((c) => c.type === "resource_link").map((c) => c.uri);
    assert.deepEqual(links, job.selected_llms.map((p) => `stepwise://research/${job.id}/reports/${p}`));

    const read = await client.readResource({ uri: links[0] });
    assert.equal(read.contents[0].text, job.llm_results[0].result);
    const synthesis = await client.readResource({ uri: `stepwise://research/${job.id}/synthesis` });
    assert.equal(synthesis.contents[0].text, job.synthesized_result);

    const articles = await client.callTool({ name: "stream_articles", arguments: { stream_id: stream.id } });
    assert.equal(articles.isError, undefined, JSON.stringify(articles));
    assert.ok(articles.structuredContent.count > 0);
    assert.match(articles.structuredContent.query, /EGFR/);
    assert.ok(articles.structuredContent.articles.length > 0);
  });

  test("research_start asks for approval through elicitation, then streams progress to the result", async () => {
    const asked = [];
    const starter = await connect(stack.base, owner, (request) => {
      asked.push(request.params);
      return { action: "accept", content: { approve: true } };
    });
    try {
      assert.match(starter.transportOf.sessionId, /^[0-9a-f]{32}$/, "initialize answered a session");
      const progress = [];
      const result = await starter.callTool(
        { name: "research_start", arguments: { prompt: "Compare EGFR inhibitors for MCP", providers: ["fake-openai", "fake-anthropic"] } },
        undefined,
        { onprogress: (p) => progress.push(p), timeout: 60000 },
      );
      assert.equal(asked.length, 1, "one question");
      assert.match(asked[0].message, /^Start a research job on "Compare EGFR inhibitors for MCP" with 2 providers \(fake-openai, fake-anthropic\): about 4 model calls\. They count against your daily allowance\. Start it\?$/);
      assert.deepEqual(asked[0].requestedSchema.required, ["approve"]);
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.equal(result.structuredContent.started, true);
      assert.equal(result.structuredContent.status, "completed");
      assert.match(result.structuredContent.synthesis, /the reports agree/);
      assert.ok(progress.length >= 1, "progress was reported");
      assert.deepEqual(progress.map((p) => p.progress), [...progress.map((p) => p.progress)].sort((a, b) => a - b), "in order");
      assert.equal(progress.at(-1).progress, 3);
      assert.equal(progress.at(-1).total, 3);
      const listed = (await apiCaller(() => stack.base)("GET", "/api/research?limit=50", { owner })).json.items;
      assert.ok(listed.some((j) => j.id === result.structuredContent.id), "the job is the owner's");

      const quick = await starter.callTool({ name: "research_start", arguments: { prompt: "Another question", providers: ["fake-openai"], wait: false } });
      assert.equal(quick.structuredContent.started, true);
      assert.match(quick.structuredContent.research_id, /^[0-9a-f]{32}$/);
    } finally {
      await starter.close();
    }
  });

  test("a dropped connection resumes with Last-Event-ID: the rest of the call once, in order, and the job started once", async () => {
    // Providers answer slowly, so that the call has progress left to send after the drop.
    stack.fake.script((request) => {
      const text = JSON.stringify(request.body);
      if (request.system?.startsWith("You name")) return { reply: "EGFR review" };
      if (text.includes("=== Source")) return { reply: "Synthesis: the reports agree on 80 mg.\n" };
      const latencyMs = request.kind === "anthropic" ? 1000 : 100;
      return { reply: "Provider report: EGFR inhibitors at 80 mg.", latencyMs };
    });
    const { client: starter, transport, resumed, cut } = await connectCutting(stack.base, owner, "research_start", "notifications/progress", () => ({
      action: "accept",
      content: { approve: true },
    }));
    try {
      const prompt = `Resumed EGFR question ${Date.now()}`;
      const progress = [];
      const result = await starter.callTool(
        { name: "research_start", arguments: { prompt, providers: ["fake-openai", "fake-anthropic"] } },
        undefined,
        { onprogress: (p) => progress.push(p.progress), timeout: 60000 },
      );
      assert.ok(cut(), "the stream was cut");
      assert.equal(resumed.length, 1, JSON.stringify(resumed));
      assert.equal(resumed[0].status, 200);
      assert.match(resumed[0].lastEventId, /^[0-9a-f]{32}-[1-9]\d*$/);
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.equal(result.structuredContent.status, "completed");
      assert.deepEqual(progress, [...new Set(progress)].sort((a, b) => a - b), `each notification once, in order: ${progress}`);
      assert.equal(progress.at(-1), 3);
      const asked = stack.fake.requests.filter((r) => r.kind === "anthropic" && JSON.stringify(r.body).includes(prompt));
      assert.equal(asked.length, 1, "the job started once: one call to each provider");

      // The same stream again from its start: every event once more, ending with the result.
      const session = transport.sessionId;
      const headers = { authorization: `Bearer ${owner}`, accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
      const stream = resumed[0].lastEventId.split("-")[0];
      const again = await fetch(`${stack.base}/mcp`, { headers: { ...headers, "last-event-id": `${stream}-0` } });
      assert.equal(again.status, 200);
      const text = await again.text();
      assert.ok(text.includes("elicitation/create") && text.endsWith("\n\n") && text.includes(`"id":`), text.slice(0, 200));
      assert.match(text.trim().split("\n\n").at(-1), /"structuredContent"/, "ends with the result");
      // An unknown stream in a live session is 400: a 404 would tell the client its session ended.
      const unknown = await fetch(`${stack.base}/mcp`, { headers: { ...headers, "last-event-id": `${"0".repeat(32)}-1` } });
      assert.equal(unknown.status, 400);
      assert.match((await unknown.json()).error.message, /no such stream/);
      const garbled = await fetch(`${stack.base}/mcp`, { headers: { ...headers, "last-event-id": "not-an-id" } });
      assert.equal(garbled.status, 400);
      const plain = await fetch(`${stack.base}/mcp`, { headers });
      assert.equal(plain.status, 405, "no stream of the server's own");
      const stranger = await fetch(`${stack.base}/mcp`, { headers: { ...headers, authorization: `Bearer ${newOwner()}`, "last-event-id": `${stream}-0` } });
      assert.equal(stranger.status, 404, "another owner's session is not found");
    } finally {
      await starter.close();
      stack.fake.script(defaultScript);
    }
  });

  test("declining or dismissing the question starts nothing", async () => {
    const before = (await apiCaller(() => stack.base)("GET", "/api/research?limit=50", { owner })).json.items.length;
    for (const [answer, decision] of [[{ action: "decline" }, "declined"], [{ action: "cancel" }, "cancelled"], [{ action: "accept", content: { approve: false } }, "declined"]]) {
      const client = await connect(stack.base, owner, () => answer);
      try {
        const result = await client.callTool({ name: "research_start", arguments: { prompt: "Not this one" } });
        assert.equal(result.structuredContent.started, false);
        assert.equal(result.structuredContent.decision, decision);
        assert.match(result.content[0].text, /Nothing was created/);
      } finally {
        await client.close();
      }
    }
    const after = (await apiCaller(() => stack.base)("GET", "/api/research?limit=50", { owner })).json.items.length;
    assert.equal(after, before, "no job, no draft");
  });

  test("a call cancelled while its question waits starts nothing, even if approved after", async () => {
    const jobs = async () => (await apiCaller(() => stack.base)("GET", "/api/research?limit=50", { owner })).json.items.length;
    const before = await jobs();
    let asked;
    const question = new Promise((resolve) => (asked = resolve));
    // The person approves half a second after the question, by when the call was cancelled.
    const late = await connect(stack.base, owner, () => {
      asked();
      return new Promise((resolve) => setTimeout(() => resolve({ action: "accept", content: { approve: true } }), 500));
    });
    try {
      const controller = new AbortController();
      const call = late.callTool({ name: "research_start", arguments: { prompt: "Cancelled before approval" } }, undefined, { signal: controller.signal });
      await question;
      controller.abort("changed my mind");
      await assert.rejects(call);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(await jobs(), before, "the late approval started nothing");
    } finally {
      await late.close();
    }
  });

  test("a client without elicitation is told which capability research_start needs", async () => {
    const result = await client.callTool({ name: "research_start", arguments: { prompt: "x" } });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /`elicitation` capability/);
    const stateless = await post(stack.base, owner, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "research_start", arguments: { prompt: "x" } } });
    assert.equal(stateless.json.result.isError, true);
    const unknownProvider = await connect(stack.base, owner, () => ({ action: "accept", content: { approve: true } }));
    try {
      const refused = await unknownProvider.callTool({ name: "research_start", arguments: { prompt: "x", providers: ["nope"] } });
      assert.equal(refused.isError, true);
      assert.match(refused.content[0].text, /`nope` is not a configured provider/);
    } finally {
      await unknownProvider.close();
    }
  });

  test("help_ask asks the desk's clarifying question through elicitation, then answers with its source", async () => {
    const asked = [];
    const helper = await connect(stack.base, owner, (request) => {
      asked.push(request.params);
      return { action: "accept", content: { answer: "a copy, please" } };
    });
    try {
      const answered = await helper.callTool({ name: "help_ask", arguments: { question: "I want a copy of my data" } });
      assert.equal(asked.length, 1, "one question, one elicitation");
      assert.equal(asked[0].message, "The help desk asks: Do you want a copy of your data, or your data erased?");
      assert.deepEqual(asked[0].requestedSchema.required, ["answer"]);
      const result = answered.structuredContent;
      assert.equal(result.needs_answer, false, JSON.stringify(result));
      assert.equal(result.doc.id, "data-request");
      assert.match(answered.content[0].text, /Source: Asking for a copy of your data or its erasure/);

      const person = await helper.callTool({ name: "help_ask", arguments: { question: "Can I talk to a person?" } });
      assert.equal(person.structuredContent.handed_to_person, true);
      assert.match(person.content[0].text, /Handed to a person/);
    } finally {
      await helper.close();
    }

    // Declined: the session waits at its question, and a later help_ask answers it.
    const decliner = await connect(stack.base, owner, () => ({ action: "decline" }));
    try {
      const waiting = await decliner.callTool({ name: "help_ask", arguments: { question: "I want a copy of my data" } });
      assert.equal(waiting.structuredContent.needs_answer, true);
      assert.match(waiting.content[0].text, /^Not answered: the help desk's question waits in session [0-9a-f]{32}\.$/);
      const session_id = waiting.structuredContent.session_id;
      // A client without elicitation answers in the next call.
      const answered = await client.callTool({ name: "help_ask", arguments: { question: "my data erased", session_id } });
      assert.equal(answered.structuredContent.needs_answer, false);
      assert.equal(answered.structuredContent.session_id, session_id);
      assert.equal(answered.structuredContent.doc.id, "data-request");
    } finally {
      await decliner.close();
    }
    const stranger = await client.callTool({ name: "help_ask", arguments: { question: "hello", session_id: "0".repeat(32) } });
    assert.equal(stranger.isError, true, "a session that is not the caller's is the tool's error");
    assert.match(stranger.content[0].text, /^The help desk could not answer: .*\(help_session_not_found\)\./);
    const plain = await client.callTool({ name: "help_ask", arguments: { question: "I want a copy of my data" } });
    assert.equal(plain.structuredContent.needs_answer, true);
    assert.match(plain.content[0].text, /The help desk asks: Do you want a copy of your data, or your data erased\?\nAnswer with help_ask, session_id [0-9a-f]{32}/);
  });

  test("guided_configure walks the workflow one form per step, validated as the app validates", async () => {
    const forms = [];
    const walker = await connect(stack.base, owner, fillForms(forms));
    try {
      const result = await walker.callTool({ name: "guided_configure", arguments: {} });
      assert.equal(result.isError, undefined, JSON.stringify(result));
      const done = result.structuredContent;
      assert.equal(done.completed, true);
      assert.equal(done.config.purpose, "Track EGFR resistance research");
      assert.deepEqual(done.config.keywords, ["EGFR", "osimertinib"]);
      assert.equal(done.config.stream_type, "competitive");
      assert.deepEqual(done.skipped, ["competitors"]);
      assert.equal(done.config.focus_areas.length, 2, "an open multi-choice step takes several values");
      const focus = forms.find((f) => /For example: /.test(f.properties.value?.description ?? ""));
      assert.match(focus.properties.value.description, /^Several values, separated by commas\. For example: /);
      const refused = forms.filter((f) => /^That was refused: /.test(f.message));
      assert.equal(refused.length, 1, "the goals over the limit were asked again, with why");
      assert.match(refused[0].message, /business_goals|10/);
      assert.match(forms.at(-1).message, /Purpose: Track EGFR resistance research/, "the review shows the configuration");
      assert.ok(forms.some((f) => f.properties.value?.enum), "a choice step is an enum");
    } finally {
      await walker.close();
    }

    const stopper = await connect(stack.base, owner, () => ({ action: "cancel" }));
    try {
      const stopped = await stopper.callTool({ name: "guided_configure", arguments: {} });
      assert.equal(stopped.structuredContent.completed, false);
      assert.equal(stopped.structuredContent.stopped_at, "purpose");
    } finally {
      await stopper.close();
    }
    const plain = await client.callTool({ name: "guided_configure", arguments: {} });
    assert.equal(plain.isError, true);
    assert.match(plain.content[0].text, /`elicitation` capability/);
  });

  test("a guided walk whose stream drops while a question waits resumes, and each form is asked once", async () => {
    const forms = [];
    const { client: walker, resumed, cut } = await connectCutting(stack.base, owner, "guided_configure", "elicitation/create", fillForms(forms));
    try {
      const result = await walker.callTool({ name: "guided_configure", arguments: {} }, undefined, { timeout: 60000 });
      assert.ok(cut(), "the stream was cut");
      assert.equal(resumed.length, 1, JSON.stringify(resumed));
      assert.equal(resumed[0].status, 200);
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.equal(result.structuredContent.completed, true);
      assert.equal(result.structuredContent.config.purpose, "Track EGFR resistance research");
      const ids = forms.map((f) => f.id);
      assert.equal(new Set(ids).size, ids.length, `each form once: ${ids}`);
      assert.match(forms.at(-1).message, /Purpose: Track EGFR resistance research/);
    } finally {
      await walker.close();
    }
  });

  test("a client of protocol 2025-06-18 gets no event without data; its events still have ids", async () => {
    const headers = { "mcp-protocol-version": "2025-06-18" };
    const init = await post(stack.base, owner, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: { elicitation: {} }, clientInfo: { name: "old", version: "1" } } });
    assert.equal(init.json.result.protocolVersion, "2025-06-18");
    const session = init.headers.get("mcp-session-id");
    const controller = new AbortController();
    const response = await fetch(`${stack.base}/mcp`, {
      method: "POST",
      signal: controller.signal,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${owner}`, "mcp-session-id": session, ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "guided_configure", arguments: {} } }),
    });
    const reader = response.body.getReader();
    let text = "";
    while (!text.includes("\n\n")) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const first = text.slice(0, text.indexOf("\n\n"));
    assert.match(first, /^id: [0-9a-f]{32}-1\ndata: \{.*"elicitation\/create"/s, first);
  });

  test("a session is the owner's alone, and ends with DELETE", async () => {
    const session = await connect(stack.base, owner, () => ({ action: "decline" }));
    const id = session.transportOf.sessionId;
    const other = await post(stack.base, newOwner(), { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" });
    assert.equal(other.status, 404, "another owner cannot use it");
    const made = await post(stack.base, owner, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": "0".repeat(32) });
    assert.equal(made.status, 404, "nor can an id nobody was given");
    // The session speaks the version its initialize answered: another one, even one this server
    // speaks, is refused, and the session goes on.
    const otherVersion = await post(stack.base, owner, { jsonrpc: "2.0", id: 3, method: "ping" }, { "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" });
    assert.equal(otherVersion.status, 400);
    assert.deepEqual(otherVersion.json.error.data, { negotiated: "2025-11-25", requested: "2025-06-18" });
    assert.match(otherVersion.json.error.message, /speaks protocol version `2025-11-25`/);
    const same = await post(stack.base, owner, { jsonrpc: "2.0", id: 4, method: "ping" }, { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" });
    assert.equal(same.status, 200);
    assert.deepEqual(same.json.result, {});
    await session.transportOf.terminateSession();
    const ended = await post(stack.base, owner, { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": id });
    assert.equal(ended.status, 404, "an ended session is gone");
    await session.close();
  });

  test("a stranger's token finds nothing of the owner's", async () => {
    const stranger = await connect(stack.base, newOwner());
    try {
      const status = await stranger.callTool({ name: "research_status", arguments: { research_id: job.id } });
      assert.equal(status.isError, true);
      assert.match(status.content[0].text, /no research job `[0-9a-f]{32}` of yours/);
      const articles = await stranger.callTool({ name: "stream_articles", arguments: { stream_id: stream.id } });
      assert.equal(articles.isError, true);
      await assert.rejects(stranger.readResource({ uri: `stepwise://research/${job.id}/synthesis` }), (error) => error instanceof McpError && error.code === -32002);
      assert.deepEqual((await stranger.listResources()).resources, []);
    } finally {
      await stranger.close();
    }
  });

  test("bad arguments and unknown tools are JSON-RPC errors that say why", async () => {
    await assert.rejects(client.callTool({ name: "research_status", arguments: { research_id: "abc" } }), (error) => {
      assert.ok(error instanceof McpError);
      assert.equal(error.code, ErrorCode.InvalidParams);
      assert.match(error.message, /invalid arguments for `research_status`: \$\.research_id: shorter than 32 characters/);
      return true;
    });
    await assert.rejects(client.callTool({ name: "research_status", arguments: { research_id: job.id, extra: 1 } }), /\$: unknown field `extra`|extra/);
    await assert.rejects(client.callTool({ name: "delete_everything", arguments: {} }), (error) => error.code === ErrorCode.InvalidParams && /unknown tool `delete_everything`/.test(error.message));
    await assert.rejects(client.readResource({ uri: "https://example.com/x" }), (error) => error.code === ErrorCode.InvalidParams);
    const unknown = await post(stack.base, owner, { jsonrpc: "2.0", id: 9, method: "sampling/createMessage", params: {} });
    assert.equal(unknown.json.error.code, ErrorCode.MethodNotFound);
  });

  test("the HTTP edges: no token, another origin, an unsupported version, a batch, not JSON, GET", async () => {
    const anonymous = await fetch(`${stack.base}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    assert.equal(anonymous.status, 401);
    const version = await post(stack.base, owner, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-protocol-version": "1999-01-01" });
    assert.equal(version.status, 400);
    assert.deepEqual(version.json.error.data.supported, ["2025-11-25", "2025-06-18"]);
    const batch = await post(stack.base, owner, [{ jsonrpc: "2.0", id: 1, method: "ping" }]);
    assert.deepEqual([batch.status, batch.json.error.code], [400, -32600]);
    const broken = await post(stack.base, owner, "{not json");
    assert.deepEqual([broken.status, broken.json.error.code], [400, -32700]);
    const notification = await post(stack.base, owner, { jsonrpc: "2.0", method: "notifications/initialized" });
    assert.equal(notification.status, 202);
    const rebound = await post(stack.base, owner, { jsonrpc: "2.0", id: 1, method: "ping" }, { origin: "https://evil.example" });
    assert.equal(rebound.status, 403, "a page of another origin is refused");
    const allowed = await post(stack.base, owner, { jsonrpc: "2.0", id: 1, method: "ping" }, { origin: "http://allowed.example" });
    assert.equal(allowed.status, 200, "ALLOWED_ORIGINS may call");
    const get = await fetch(`${stack.base}/mcp`, { headers: { authorization: `Bearer ${owner}`, accept: "text/event-stream" } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get("allow"), "POST");
  });
});

describe("the MCP endpoint's kill switch and rate limit", () => {
  let stack;
  before(async () => {
    stack = await startStack({
      overrides: { MODEL_CALLS_DISABLED: "true" },
      config: (wrangler) => {
        for (const limit of wrangler.ratelimits) if (limit.name === "OWNER_RATE_LIMIT") limit.simple.limit = 6;
        return wrangler;
      },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  test("the kill switch refuses research_start; an owner past the limit gets 429 with Retry-After", async () => {
    const owner = newOwner();
    const client = await connect(stack.base, owner); // initialize and its notification: 2
    try {
      const off = await post(stack.base, owner, { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "research_start", arguments: { prompt: "x" } } });
      assert.equal(off.status, 200);
      assert.equal(off.json.result.isError, true);
      assert.match(off.json.result.content[0].text, /model calls are switched off/);
      await client.listTools(); // read-only calls still work
      await client.ping();
      await client.listTools();
      await assert.rejects(client.listTools(), /rate_limited/);
      const raw = await post(stack.base, owner, { jsonrpc: "2.0", id: 5, method: "ping" });
      assert.equal(raw.status, 429);
      assert.ok(Number(raw.headers.get("retry-after")) > 0);
    } finally {
      await client.close();
    }
  });
});

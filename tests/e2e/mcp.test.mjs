// End-to-end tests of the MCP endpoint (issue 33, first part) under `wrangler dev`, driven by the
// official TypeScript client (`@modelcontextprotocol/sdk`'s `Client` over
// `StreamableHTTPClientTransport`), which checks every answer against the protocol's schemas:
// initialize and version negotiation, tools and resources listed, each read-only tool, a
// stranger's token, bad arguments and unknown tools as JSON-RPC errors, a missing resource, and
// the HTTP edges (no token, another site's page, an unsupported protocol version, a batch, GET). The rate limit has a
// stack of its own.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { apiCaller, fakeProvider, newOwner, startStack } from "./harness.mjs";
import { savedStream } from "./fixtures.mjs";

/** A connected MCP client of `owner` (the owner token as a bearer token). */
async function connect(base, owner) {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${owner}` } },
  });
  const client = new Client({ name: "stepwise-e2e", version: "1.0.0" });
  await client.connect(transport);
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
    stack.fake.script((request) => {
      const text = JSON.stringify(request.body);
      if (request.system?.startsWith("You name")) return { reply: "EGFR review" };
      if (text.includes("=== Source")) return { reply: "Synthesis: the reports agree on 80 mg.\n" };
      return { reply: "Provider report: EGFR inhibitors at 80 mg." };
    });
    const call = apiCaller(() => stack.base);
    const draft = await call("POST", "/api/research/draft", { owner, body: { prompt: "Compare EGFR inhibitors", selected_llms: ["fake-openai", "fake-anthropic"], synthesis_llm: "fake-openai" } });
    assert.equal(draft.status, 201, draft.text);
    assert.equal((await call("POST", "/api/research", { owner, body: { research_id: draft.json.id } })).status, 200);
    const deadline = Date.now() + 20000;
    for (;;) {
      job = (await call("GET", `/api/research/${draft.json.id}`, { owner })).json;
      if (job.status === "completed") break;
      if (Date.now() > deadline) throw new Error(`job did not complete: ${JSON.stringify(job).slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
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
    assert.deepEqual(tools.map((t) => t.name).sort(), ["research_result", "research_status", "stream_articles"]);
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

describe("the MCP endpoint's rate limit", () => {
  let stack;
  before(async () => {
    stack = await startStack({
      config: (wrangler) => {
        for (const limit of wrangler.ratelimits) if (limit.name === "OWNER_RATE_LIMIT") limit.simple.limit = 4;
        return wrangler;
      },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  test("an owner past the limit gets 429 with Retry-After, and the client an error", async () => {
    const owner = newOwner();
    const client = await connect(stack.base, owner); // initialize and its notification: 2
    try {
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

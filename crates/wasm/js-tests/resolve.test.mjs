// The assistant's resolution through the package's JS API (`resolveChat`): the shared registry
// vectors, and the built-in registry the app serves, resolved in wasm by the core.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { MarkerStream, repoFile, resolveChat } from "./load.mjs";

const vectors = JSON.parse(repoFile("vectors/assistant_registry.json"));

test("registry vectors resolve in wasm exactly as natively", () => {
  for (const c of vectors.resolution) {
    const got = resolveChat(vectors.registry, c.page, c.tab, c.subtab);
    assert.deepEqual(
      { payloads: got.payloads.map((p) => p.name), tools: got.tools, client_actions: got.client_actions, markers: got.markers },
      c.expect,
      c.name,
    );
    assert.deepEqual(got.server_actions, ["do_it"], c.name);
  }
});

test("the built-in registry gives each Streams tab its own markers, which the parser then honours", () => {
  const builtin = JSON.parse(readFileSync(new URL("../../core/src/registry/builtin.json", import.meta.url), "utf8"));
  const articles = resolveChat(builtin, "streams", "articles");
  assert.deepEqual(articles.markers, ["CONTEXT_REQUEST", "QUERY_SUGGESTION", "FILTER_SUGGESTION"]);
  assert.ok(articles.payloads.some((p) => p.name === "pubmed_search_results" && p.source === "tool" && p.marker === null));
  assert.deepEqual(resolveChat(builtin, "streams", "settings").markers, ["CONTEXT_REQUEST", "STREAM_CONFIG_SUGGESTION"]);
  const stream = new MarkerStream(articles.markers);
  const events = stream.feed('Try this:\nQUERY_SUGGESTION: {"query": "EGFR"}\nSTREAM_CONFIG_SUGGESTION: {"edits": []}\n');
  assert.deepEqual(events.filter((e) => e.type === "marker").map((e) => e.kind), ["payload"]);
  // A marker the page does not allow stays text (never raw syntax as a card).
  assert.ok(stream.finish().message.includes("STREAM_CONFIG_SUGGESTION"));
});

test("suggested actions carry their target when they name one", () => {
  const stream = new MarkerStream();
  stream.feed('SUGGESTED_ACTIONS: [{"label": "Open", "action": "open_research", "handler": "client", "target": "r1"}, {"label": "Go", "action": "navigate", "handler": "client"}]\n');
  assert.deepEqual(stream.finish().suggested_actions, [
    { label: "Open", action: "open_research", handler: "client", target: "r1" },
    { label: "Go", action: "navigate", handler: "client" },
  ]);
});

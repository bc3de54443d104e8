// One-off check (not committed): a conversation stored whole by the build before rows is read
// by this build, moved into rows, and takes new turns.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiCaller, fakeProvider, newOwner, startStack } from "./harness.mjs";
const providers = (url) => [fakeProvider(url, "fake-openai", "openai"), { name: "offline", kind: "offline" }];
const state = mkdtempSync(join(tmpdir(), "stepwise-migrate-"));
const owner = newOwner();
const context = { current_page: "chat" };
const turn = async (call, body) => { const r = await call("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body: { context, provider: "offline", ...body } }); assert.equal(r.status, 200, r.text); return r.json; };
let id;
const old = await startStack({ runtime: "miniflare", persist: state, providers, workerDir: process.argv[2] });
try {
  const call = apiCaller(() => old.base);
  id = (await turn(call, { message: "First question about heat pumps" })).conversation_id;
  for (let n = 2; n <= 5; n++) await turn(call, { message: `Question ${n}`, conversation_id: id });
  console.log("old build: ", (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json.messages.length, "messages");
} finally { await old.stop(); }
const next = await startStack({ runtime: "miniflare", persist: state, providers });
try {
  const call = apiCaller(() => next.base);
  const read = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
  console.log("new build reads:", read.messages.length, "messages, first:", read.messages[0].content);
  await turn(call, { message: "Question 6", conversation_id: id });
  const after = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
  console.log("after a turn:", after.messages.length, "messages, turns", after.turns);
} finally { await next.stop(); }
const again = await startStack({ runtime: "miniflare", persist: state, providers });
try {
  const call = apiCaller(() => again.base);
  const read = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
  console.log("restarted, from rows:", read.messages.length, "messages; last:", read.messages.at(-1).content.slice(0, 60));
} finally { await again.stop(); }

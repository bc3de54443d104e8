// End-to-end test of a long assistant conversation under `wrangler dev`: past the old wall of
// 100 turns, every message is kept as a row of the conversation's object, the model reads the
// newest messages with a digest of earlier ones within the history budget, and the record is
// read back whole after the Worker restarts on the same state.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiCaller, fakeProvider, newOwner, startStack } from "./harness.mjs";

const TURNS = 300;
const providers = (url) => [fakeProvider(url, "fake-openai", "openai"), { name: "offline", kind: "offline" }];
const context = { current_page: "chat" };
const message = (n) => `Message ${n}: how do heat pumps behave in houses built before ${1800 + n}?`;

/** One JSON assistant turn; its answer. */
async function turn(call, owner, body) {
  const response = await call("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body: { context, ...body } });
  assert.equal(response.status, 200, response.text);
  return response.json;
}

test(`a ${TURNS}-turn conversation: no wall, every message kept, the model reads the newest after a digest, and the record survives a restart`, async () => {
  const state = mkdtempSync(join(tmpdir(), "stepwise-long-"));
  const owner = newOwner();
  let id;
  const first = await startStack({ persist: state, providers });
  try {
    const call = apiCaller(() => first.base);
    id = (await turn(call, owner, { message: message(1), provider: "offline" })).conversation_id;
    for (let n = 2; n < TURNS; n++) {
      const answer = await turn(call, owner, { message: message(n), provider: "offline", conversation_id: id });
      assert.equal(answer.conversation_id, id);
    }
    first.fake.script(() => ({ reply: `Answer ${TURNS}.` }));
    const since = Date.now();
    const last = await turn(call, owner, { message: message(TURNS), provider: "fake-openai", conversation_id: id });
    assert.equal(last.message, `Answer ${TURNS}.`);
    const [request] = first.fake.requests.filter((r) => r.at >= since);
    const history = request.body.messages.filter((m) => m.role !== "system");
    const digest = history[0].content.match(/^\(Earlier in this conversation, after (\d+) older messages, one line a message:\n((?:- .*\n)*- .*)\)\n\n/);
    assert.ok(digest, history[0].content.slice(0, 300));
    const lines = digest[2].split("\n");
    assert.ok(lines.some((l) => l.startsWith("- user: Message ")) && lines.some((l) => l.startsWith("- assistant: ")), digest[2]);
    // Every earlier message is accounted for: left out, in the digest, or read whole.
    assert.equal(Number(digest[1]) + lines.length + history.length - 1, 2 * (TURNS - 1));
    assert.equal(history.at(-1).content.includes(message(TURNS)), true, "the new message last");
    const chars = history.slice(0, -1).reduce((sum, m) => sum + m.content.length, 0);
    assert.ok(chars <= 24000, `${chars} characters of history`);
    assert.ok(!history.some((m) => m.content.includes(message(1))), "the first message is left out");
    const record = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
    assert.equal(record.turns, TURNS);
    assert.equal(record.messages.length, 2 * TURNS);
    assert.equal(record.messages[0].content, message(1));
  } finally {
    await first.stop();
  }
  const second = await startStack({ persist: state, providers });
  try {
    const call = apiCaller(() => second.base);
    const record = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
    assert.equal(record.messages.length, 2 * TURNS, "every message read back from its row");
    assert.equal(record.messages[0].content, message(1));
    assert.equal(record.messages.at(-1).content, `Answer ${TURNS}.`);
    await turn(call, owner, { message: message(TURNS + 1), provider: "offline", conversation_id: id });
    const after = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
    assert.equal(after.messages.length, 2 * TURNS + 2);
    assert.equal(after.turns, TURNS + 1);
    const gone = await call("DELETE", `/api/assistant/conversations/${id}`, { owner });
    assert.ok(gone.status < 300, gone.text);
    assert.equal((await call("GET", `/api/assistant/conversations/${id}`, { owner })).status, 404);
  } finally {
    await second.stop();
    rmSync(state, { recursive: true, force: true });
  }
});

// Browser end-to-end test of a long assistant conversation in the tray: playwright-core drives
// /usr/bin/chromium against `wrangler dev` with the offline provider. A conversation of 150
// turns, past the old wall of 100, made over the API, opens in the tray with its newest 200
// messages, shows the rest on "Show earlier messages", answers a new message there, and opens
// the same way after a reload.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { apiCaller, newOwner, startStack } from "../e2e/harness.mjs";
import { CHROMIUM_ARGS, ownerTab } from "./tabs.mjs";

const TURNS = 150;
let stack;
let browser;

before(async () => {
  stack = await startStack({ providers: () => [{ name: "offline", kind: "offline" }], overrides: { LLM_PROVIDER: "offline" } });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const count = (page, role) => page.locator(`.tray-log .msg.${role}`).count();

test(`a conversation of ${TURNS} turns opens a page at a time in the tray, answers there, and again after a reload`, async () => {
  const owner = newOwner();
  const call = apiCaller(() => stack.base);
  let id;
  for (let n = 1; n <= TURNS; n++) {
    const body = { message: `Question ${n} about heat pumps`, context: { current_page: "chat" }, ...(id ? { conversation_id: id } : {}) };
    const answer = await call("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body });
    assert.equal(answer.status, 200, answer.text);
    id = answer.json.conversation_id;
  }
  const { page, context, errors } = await ownerTab(browser, stack.base, owner, "/#chat");
  try {
    // The tray opens the conversation this browser last had.
    await page.evaluate((id) => localStorage.setItem("stepwise.assistant.v1", id), id);
    await page.reload();
    // The newest 200 messages, then the 100 before them on "Show earlier messages".
    await page.waitForFunction(() => document.querySelectorAll(".tray-log .msg.user").length === 100, null, { timeout: 20000 });
    assert.equal(await count(page, "assistant"), 100);
    assert.match(await page.locator(".tray-log .msg.user").first().textContent(), /Question 51 about heat pumps/);
    const earlier = page.locator(".tray-log [data-action=show-earlier]");
    assert.equal(await earlier.textContent(), "Show earlier messages (100)");
    await earlier.click();
    await page.waitForFunction((n) => document.querySelectorAll(".tray-log .msg.user").length === n, TURNS, { timeout: 20000 });
    assert.equal(await count(page, "assistant"), TURNS);
    assert.equal(await earlier.count(), 0, "nothing earlier");
    const users = await page.locator(".tray-log .msg.user").allTextContents();
    assert.deepEqual(users.map((t) => Number(t.match(/Question (\d+)/)[1])), Array.from({ length: TURNS }, (_, i) => i + 1), "every message once, in order");
    await page.fill("#assistant-input", "One more question, past the old wall");
    await page.press("#assistant-input", "Enter");
    await page.waitForFunction((n) => {
      const answers = document.querySelectorAll(".tray-log .msg.assistant");
      return answers.length === n && answers[n - 1].getAttribute("aria-busy") === null;
    }, TURNS + 1, { timeout: 20000 });
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll(".tray-log .msg.user").length === 100, null, { timeout: 20000 });
    assert.match(await page.locator(".tray-log .msg.user").last().textContent(), /past the old wall/);
    assert.equal(await page.locator(".tray-log [data-action=show-earlier]").textContent(), "Show earlier messages (102)");
    const stored = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
    assert.equal(stored.messages.length, 2 * (TURNS + 1));
    assert.deepEqual([stored.messages_from, stored.message_count], [0, 2 * (TURNS + 1)]);
    // Over the API: a page, and the refusals of a bad one.
    const page2 = (await call("GET", `/api/assistant/conversations/${id}?limit=10&before=100`, { owner })).json;
    assert.deepEqual([page2.messages_from, page2.messages.length, page2.message_count], [90, 10, 2 * (TURNS + 1)]);
    assert.deepEqual(page2.messages, stored.messages.slice(90, 100));
    for (const query of ["limit=0", "limit=1001", "before=3", "limit=x"]) {
      const refused = await call("GET", `/api/assistant/conversations/${id}?${query}`, { owner });
      assert.deepEqual([refused.status, refused.json.error.code], [422, "invalid_request"], query);
    }
    assert.equal((await call("GET", `/api/assistant/conversations/${id}?limit=10`, { owner: newOwner() })).status, 404);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

// Browser end-to-end test of a long assistant conversation in the tray: playwright-core drives
// /usr/bin/chromium against `wrangler dev` with the offline provider. A conversation of 150
// turns, past the old wall of 100, made over the API, opens whole in the tray, answers a new
// message there, and is whole again after a reload.
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

test(`a conversation of ${TURNS} turns opens whole in the tray, answers there, and is whole after a reload`, async () => {
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
    await page.waitForFunction((n) => document.querySelectorAll(".tray-log .msg.user").length === n, TURNS, { timeout: 20000 });
    assert.equal(await count(page, "assistant"), TURNS);
    assert.match(await page.locator(".tray-log .msg.user").first().textContent(), /Question 1 about heat pumps/);
    await page.fill("#assistant-input", "One more question, past the old wall");
    await page.press("#assistant-input", "Enter");
    await page.waitForFunction((n) => {
      const answers = document.querySelectorAll(".tray-log .msg.assistant");
      return answers.length === n && answers[n - 1].getAttribute("aria-busy") === null;
    }, TURNS + 1, { timeout: 20000 });
    await page.reload();
    await page.waitForFunction((n) => document.querySelectorAll(".tray-log .msg.user").length === n, TURNS + 1, { timeout: 20000 });
    assert.match(await page.locator(".tray-log .msg.user").last().textContent(), /past the old wall/);
    const stored = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
    assert.equal(stored.messages.length, 2 * (TURNS + 1));
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

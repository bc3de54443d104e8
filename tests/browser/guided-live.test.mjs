// Browser end-to-end test of live guided-chat turns: playwright-core drives /usr/bin/chromium
// against `wrangler dev` with a fake provider that paces its answer. The first answer of a new
// conversation is reloaded mid-way: the page joins the turn on the server and the answer streams
// on, then completes once; the next answer is stopped with Stop: it stays as far as it got,
// marked stopped, and the conversation takes the next message.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { fakeProvider, startStack } from "../e2e/harness.mjs";
import { CHROMIUM_ARGS } from "./tabs.mjs";

const LINES = 30;
const REPLY = Array.from({ length: LINES }, (_, i) => `Line ${i + 1} of the paced answer.`).join("\n");
let stack;
let browser;

before(async () => {
  stack = await startStack({ providers: (url) => [fakeProvider(url, "fake-openai", "openai")], overrides: { LLM_PROVIDER: "fake-openai" } });
  stack.fake.script((request) => (request.system?.includes("Stepwise assistant") ? { reply: "Other." } : { reply: REPLY, paced: true, delayMs: 100 }));
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const answers = (page) => page.locator(".chat-layout .log .msg.assistant");
const linesOf = (text) => (text ?? "").split("\n").filter(Boolean).length;
const whenLines = (page, n) =>
  page.waitForFunction((n) => {
    const all = document.querySelectorAll(".chat-layout .log .msg.assistant");
    return (all[all.length - 1]?.textContent ?? "").split("\n").filter(Boolean).length >= n;
  }, n, { timeout: 20000 });
const whenIdle = (page) => page.waitForFunction(() => !document.querySelector(".chat-layout .log .msg.assistant[aria-busy]") && !document.querySelector("#chat-input")?.disabled, null, { timeout: 30000 });

describe("live guided turns in the chat", () => {
  test("a reload mid-answer joins the turn and the answer goes on; Stop keeps the answer so far, marked stopped", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(stack.base + "/#chat");
    await page.fill("#chat-input", "Track rivals");
    await page.press("#chat-input", "Enter");
    await whenLines(page, 5);
    const calls = stack.fake.requests.length;
    await page.reload();
    // The page joins the turn on the server: the answer streams on, then completes.
    await whenLines(page, LINES).catch(async (error) => {
      const log = await page.locator(".chat-layout .log").innerHTML();
      const notice = await page.locator(".chat-layout [aria-live=assertive]").innerHTML();
      throw new Error(`${error.message}\n${log.slice(-1500)}\n${notice}`);
    });
    await whenIdle(page);
    const first = await answers(page).last().textContent();
    assert.equal(linesOf(first), LINES, first);
    assert.equal(stack.fake.requests.length, calls, "the reload made no model call");
    assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).count(), 1, "the question shows once");

    // Stop: the answer stays as far as it got, marked stopped.
    await page.fill("#chat-input", "Tell me more");
    await page.press("#chat-input", "Enter");
    await whenLines(page, 4);
    await page.click('[data-action="stop"]');
    await page.locator(".chat-layout .log .msg.assistant.stopped").waitFor({ timeout: 20000 });
    await whenIdle(page);
    const stopped = await page.locator(".chat-layout .log .msg.assistant.stopped").textContent();
    assert.match(stopped, /\(stopped\)$/);
    assert.ok(linesOf(stopped) < LINES, stopped);
    // The conversation takes the next message (the stopped answer was a turn on the server).
    stack.fake.script(() => ({ reply: "A short one." }));
    await page.fill("#chat-input", "Next");
    await page.press("#chat-input", "Enter");
    await page.locator(".chat-layout .log .msg.assistant", { hasText: "A short one." }).waitFor({ timeout: 20000 });
    assert.equal(await page.locator(".chat-layout [role=alert]").count(), 0, await page.locator(".chat-layout [role=alert]").allTextContents().then(String));
    assert.deepEqual(errors, []);
    await context.close();
  });
});

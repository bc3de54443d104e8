// Browser end-to-end test of context on request in the assistant tray: playwright-core drives
// /usr/bin/chromium against `wrangler dev` with only the offline provider. A message that needs
// the user's notes shows a request card; a note attached resumes the turn and the answer names
// it. Closed while waiting and opened again, the tab shows the pending card, and "Run without
// context" answers with a warning. Screenshot: tests/browser/screenshots/request-card.png.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { startStack } from "../e2e/harness.mjs";

const SHOTS = new URL("./screenshots/", import.meta.url).pathname;
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
let stack;
let browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  stack = await startStack({ providers: () => [{ name: "offline", kind: "offline" }], overrides: { LLM_PROVIDER: "offline" } });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("context on request, offline", () => {
  test("a request card, a note attached, the answer; closed while waiting and back, run without context", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    let page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(stack.base + "/#chat");
    await page.click(".tray-toggle");
    await page.fill("#assistant-input", "Compare this with my notes");
    await page.press("#assistant-input", "Enter");
    const card = page.locator(".request-card");
    await card.waitFor({ timeout: 20000 });
    assert.match(await card.innerText(), /Needs: Phase 0 Your notes to compare with/);
    assert.match(await card.locator(".request-status").innerText(), /Answers without it in \d+ s\./);
    await page.screenshot({ path: `${SHOTS}request-card.png` });
    await card.locator("textarea").fill("Our note: dose escalation is the priority.");
    await card.locator('[data-action="attach-note"]').click();
    const answer = page.locator(".tray-log .msg.assistant").last();
    await page.waitForFunction(() => /Our note: dose escalation/.test(document.querySelector(".tray-log .msg.assistant:last-child")?.textContent ?? ""), null, { timeout: 20000 });
    assert.match(await answer.innerText(), /\[Phase 0\] Your notes to compare with[^:]*: Our note: dose escalation is the priority\./);

    await page.fill("#assistant-input", "And check my notes once more");
    await page.press("#assistant-input", "Enter");
    await page.locator(".request-card").last().waitFor();
    await page.close();
    page = await context.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(stack.base + "/#chat");
    const pending = page.locator(".request-card");
    await pending.waitFor({ timeout: 20000 });
    await pending.locator('[data-action="force"]').click();
    await page.waitForFunction(() => /^⚠ Answered without the context asked for/.test(document.querySelector(".tray-log .msg.assistant:last-child .text")?.textContent ?? ""), null, { timeout: 20000 });
    assert.deepEqual(errors, []);
    await context.close();
  });
});

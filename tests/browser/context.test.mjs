// Browser end-to-end test of context on request in the assistant tray: playwright-core drives
// /usr/bin/chromium against `wrangler dev` with only the offline provider. A message that needs
// the user's notes shows a request card; a note attached resumes the turn and the answer names
// it, and is carried into the next turn. Closed while waiting and opened again, the tab shows the
// pending card; a message typed meanwhile is kept in the composer; "Run without context"
// answers with a warning. Screenshot: tests/browser/screenshots/request-card.png.
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

    // The note is carried: asking about it again needs nothing more.
    const [answers, cards] = [await page.locator(".tray-log .msg.assistant").count(), await page.locator(".request-card").count()];
    await page.fill("#assistant-input", "And check my notes once more");
    await page.press("#assistant-input", "Enter");
    await page.waitForFunction((n) => document.querySelectorAll(".tray-log .msg.assistant:not([aria-busy])").length > n, answers, { timeout: 20000 });
    assert.equal(await page.locator(".request-card").count(), cards, "no second card for the notes");

    await page.fill("#assistant-input", "Plan the next steps");
    await page.press("#assistant-input", "Enter");
    await page.locator(".request-card").last().waitFor();
    await page.close();
    page = await context.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(stack.base + "/#chat");
    const pending = page.locator(".request-card");
    await pending.waitFor({ timeout: 20000 });
    // The answered request says, after the reload, what it got.
    assert.equal(await page.locator(".request-note").first().innerText(), "Context: Your notes to compare with: attached by you.");
    // A message typed while the card waits is kept in the composer, with the reason on the card.
    const users = await page.locator(".tray-log .msg.user").count();
    await page.fill("#assistant-input", "Meanwhile, a question");
    await page.press("#assistant-input", "Enter");
    await page.waitForFunction(() => /kept in the box below/.test(document.querySelector(".request-card .request-status")?.textContent ?? ""), null, { timeout: 10000 });
    assert.equal(await page.inputValue("#assistant-input"), "Meanwhile, a question");
    assert.equal(await page.locator(".tray-log .msg.user").count(), users, "no bubble for a message not sent");
    assert.equal(await page.locator(".tray-log .error, .tray-log [data-status=failed]").count(), 0);
    await pending.locator('[data-action="force"]').click();
    await page.waitForFunction(() => /^⚠ Answered without the context asked for/.test(document.querySelector(".tray-log .msg.assistant:last-child .text")?.textContent ?? ""), null, { timeout: 20000 });
    // The answer may come over the live connection before the force's own reply.
    await page.waitForFunction(() => document.querySelector(".request-card")?.innerText === "Answered without the context.", null, { timeout: 10000 });
    assert.match(await page.locator(".tray-log .msg.assistant").last().innerText(), /no context was supplied/);
    // Sent now, it is answered.
    await page.press("#assistant-input", "Enter");
    await page.locator(".tray-log .msg.user", { hasText: "Meanwhile, a question" }).waitFor({ timeout: 10000 });
    assert.deepEqual(errors, []);
    await context.close();
  });
});

// Browser tests of the Help page as a newcomer with no key sees it: the offline provider,
// the starter knowledge base, playwright-core driving /usr/bin/chromium. The whole loop is
// typed: the article's questions one at a time, a reload mid-loop, the answer that uses the
// answers, then an article that hands off (footer after the answer, "escalated" banner), and
// the operators' view. Screenshots go to tests/browser/screenshots (shown in the README and docs/).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { ADMIN_TOKEN, startStack } from "../e2e/harness.mjs";

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

async function type(page, text) {
  await page.waitForSelector("#help-input:not([disabled])");
  await page.fill("#help-input", text);
  await page.press("#help-input", "Enter");
}

const lastDesk = (page) => page.locator(".help-log .msg.assistant").last();

describe("the Help page", () => {
  test("questions one at a time, a reload mid-loop, an answer using the answers, then a handoff", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 860 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${stack.base}/#help`);

    await type(page, "My research job failed, what now?");
    await page.waitForSelector(".help-progress:has-text('Question 1 of 2')");
    assert.match(await lastDesk(page).innerText(), /What status does the job show: partial or failed\?/);
    await type(page, "partial");
    await page.waitForSelector(".help-progress:has-text('Question 2 of 2')");
    await page.screenshot({ path: `${SHOTS}help-question.png` });

    // A reload resumes at the same question.
    await page.reload();
    await page.waitForSelector(".help-progress:has-text('Question 2 of 2')");
    assert.equal(await page.locator(".help-log .msg.user").count(), 2);

    await type(page, "timeout");
    await page.waitForSelector(".help-log .msg.assistant:has-text('You told me')");
    const answer = await lastDesk(page).innerText();
    assert.match(answer, /`timeout`: the provider did not answer/, "the offline answer quotes the line the answer points to");
    assert.match(answer, /What status does the job show: partial or failed\? partial/);
    assert.equal(await page.locator(".help-progress").innerText(), "");

    // A new question whose article hands off: the footer comes after the answer.
    await page.click("button:has-text('New question')");
    await type(page, "I want to erase all of my data and my account");
    await page.waitForSelector(".help-progress:has-text('Question 1 of 1')");
    await type(page, "me@example.org");
    await page.waitForSelector(".handoff-footer");
    const order = await page.evaluate(() => [...document.querySelectorAll(".help-log > *")].slice(-2).map((e) => e.className));
    assert.deepEqual(order, ["msg assistant", "handoff-footer"]);
    assert.equal(await page.locator(".handoff-footer").innerText(), "Connecting you to an agent…");
    assert.match(await page.locator(".help-banner").innerText(), /Escalated/);
    assert.ok(await page.locator("#help-input").isDisabled());
    await page.screenshot({ path: `${SHOTS}help-handoff.png` });

    // The operators' view lists the session with its answers and resolves it.
    // (The session's object announces the escalation from its alarm, at once: wait for it.)
    const sessionId = await page.evaluate(() => localStorage.getItem("stepwise.help.session"));
    for (let i = 0; i < 50; i++) {
      const listed = await fetch(`${stack.base}/api/help/escalations`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.json());
      if (listed.items.some((s) => s.id === sessionId)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await page.goto(`${stack.base}/#help/operator`);
    await page.fill("#admin-token", ADMIN_TOKEN);
    await page.click("text=Show escalations");
    const card = page.locator(".operator-card").filter({ hasText: "erase all of my data" });
    await card.waitFor();
    assert.match(await card.innerText(), /me@example\.org/);
    await page.screenshot({ path: `${SHOTS}help-operator.png` });
    await card.locator("text=Mark resolved").click();
    await page.waitForSelector(".operator-card:has-text('erase all of my data')", { state: "detached" });
    assert.deepEqual(errors, []);
    await context.close();
  });
});

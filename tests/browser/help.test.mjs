// Browser tests of the Help page as a newcomer with no key sees it: the offline provider,
// the starter knowledge base, playwright-core driving /usr/bin/chromium. The whole loop is
// typed: the article's questions one at a time, a reload mid-loop, the answer that uses the
// answers; an article that needs a person answers first and offers one, the user accepts
// (footer after the reply, banner) and keeps asking; the operators' view. Then what issue 28
// found: a typed request for a person hands over as the button does, an unrelated question is
// no answer (nothing handed over, Ask stays), the starter articles ask users about the app, and
// the question box is comfortable with the newest message in view. Screenshots go to
// tests/browser/screenshots (shown in the README and docs/).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { ADMIN_TOKEN, startStack } from "../e2e/harness.mjs";

const SHOTS = new URL("./screenshots/", import.meta.url).pathname;
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const HANDOFF_REPLY = /^I am handing this conversation to a person\./;
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

/** A fresh browser (its own owner token) on the Help page; `errors` collects page errors. */
async function helpPage(viewport = { width: 1100, height: 860 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${stack.base}/#help`);
  await page.waitForSelector("#help-input");
  return { context, page, errors };
}

/** Types a message and waits for the desk's reply to it. */
async function type(page, text) {
  await page.waitForSelector("#help-input:not([disabled])");
  const replies = await page.locator(".help-log .msg.assistant").count();
  await page.fill("#help-input", text);
  await page.press("#help-input", "Enter");
  await page.waitForFunction((n) => document.querySelectorAll(".help-log .msg.assistant").length > n, replies);
  await page.waitForSelector("#help-input:not([disabled])").catch(() => {});
}

const lastDesk = (page) => page.locator(".help-log .msg.assistant").last();
const talkButton = (page) => page.locator("button:has-text('Talk to a person')");

describe("the Help page", () => {
  test("questions one at a time, a reload mid-loop, an answer using the answers, then a person offered and accepted", async () => {
    const { context, page, errors } = await helpPage();

    await type(page, "My research job failed, what now?");
    await page.waitForSelector(".help-progress:has-text('Question 1 of 2')");
    assert.match(await lastDesk(page).innerText(), /What does the job's badge say: awaiting confirmation or failed\?/);
    await type(page, "awaiting confirmation");
    await page.waitForSelector(".help-progress:has-text('Question 2 of 2')");
    await page.screenshot({ path: `${SHOTS}help-question.png` });

    // A reload resumes at the same question.
    await page.reload();
    await page.waitForSelector(".help-progress:has-text('Question 2 of 2')");
    assert.equal(await page.locator(".help-log .msg.user").count(), 2);

    await type(page, "timeout");
    await page.waitForSelector(".help-log .msg.assistant:has-text('You told me')");
    const answer = await lastDesk(page).innerText();
    assert.match(answer, /\(timeout\): the model was too slow/, "the offline answer quotes the line the answer points to");
    assert.match(answer, /What does the job's badge say: awaiting confirmation or failed\? awaiting confirmation/);
    assert.equal(await page.locator(".help-progress").innerText(), "");
    assert.ok(await talkButton(page).isVisible(), "a person is offered with every answer");

    // An article that needs a person: the answer comes first and offers one; nothing is handed
    // over until the user accepts, and they can go on asking after.
    await page.click("button:has-text('New question')");
    await type(page, "I want a copy of my data");
    await page.waitForSelector(".help-progress:has-text('Question 1 of 1')");
    await type(page, "a copy, please");
    assert.match(await lastDesk(page).innerText(), /A person needs to take this further\. Say yes, or press "Talk to a person"/);
    assert.equal(await page.locator(".handoff-footer").count(), 0, "not handed over unasked");
    assert.ok(await page.locator(".help-banner").isHidden());
    assert.equal(await talkButton(page).getAttribute("class"), "btn", "the offer is the main button");
    await type(page, "yes");
    await page.waitForSelector(".handoff-footer");
    const order = await page.evaluate(() => [...document.querySelectorAll(".help-log > *")].slice(-2).map((e) => e.className));
    assert.deepEqual(order, ["msg assistant", "handoff-footer"]);
    assert.match(await lastDesk(page).innerText(), HANDOFF_REPLY);
    assert.equal(await page.locator(".handoff-footer").innerText(), "Connecting you to an agent…");
    assert.match(await page.locator(".help-banner").innerText(), /Escalated: a person has this conversation.*keep asking/);
    assert.ok(await talkButton(page).isHidden());
    assert.ok(await page.locator("#help-input").isEnabled(), "the user can keep asking");
    await page.screenshot({ path: `${SHOTS}help-handoff.png` });
    await type(page, "How do I share a report?");
    assert.match(await lastDesk(page).innerText(), /Publish a share link/);

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
    const card = page.locator(".operator-card").filter({ hasText: "I want a copy of my data" });
    await card.waitFor();
    assert.match(await card.innerText(), /a copy, please/);
    await page.screenshot({ path: `${SHOTS}help-operator.png` });
    await card.locator("text=Mark resolved").click();
    await page.waitForSelector(".operator-card:has-text('I want a copy of my data')", { state: "detached" });
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("typing a request for a person hands over exactly as the Talk to a person button does", async () => {
    const typed = await helpPage();
    await type(typed.page, "I want to talk to a person");
    const reply = await lastDesk(typed.page).innerText();
    assert.match(reply, HANDOFF_REPLY, `searched like a question: ${reply}`);
    assert.equal(await typed.page.locator(".help-progress").innerText(), "", "no clarifying question");
    assert.equal(await typed.page.locator(".handoff-footer").innerText(), "Connecting you to an agent…");
    assert.match(await typed.page.locator(".help-banner").innerText(), /Escalated/);
    assert.ok(await typed.page.locator("#help-input").isEnabled());

    // The button, offered under an ordinary answer, not only when nothing matched.
    const button = await helpPage();
    await type(button.page, "How do I share a report?");
    assert.match(await lastDesk(button.page).innerText(), /Sharing a research report/);
    assert.ok(await talkButton(button.page).isVisible());
    await talkButton(button.page).click();
    await button.page.waitForSelector(".handoff-footer");
    assert.equal(await lastDesk(button.page).innerText(), reply);
    assert.match(await button.page.locator(".help-banner").innerText(), /Escalated/);
    // A reload shows the same handoff line and footer.
    await button.page.reload();
    await button.page.waitForSelector(".handoff-footer");
    assert.equal(await lastDesk(button.page).innerText(), reply);
    assert.deepEqual([...typed.errors, ...button.errors], []);
    await typed.context.close();
    await button.context.close();
  });

  test("an unrelated question is no answer: nothing is handed over and the user can ask again", async () => {
    const { context, page, errors } = await helpPage();
    await type(page, "can I export my streams to Excel?");
    const reply = await lastDesk(page).innerText();
    assert.match(reply, /I could not find an answer to that in the help articles/, `matched an article: ${reply}`);
    assert.equal(await page.locator(".help-progress").innerText(), "");
    assert.equal(await page.locator(".handoff-footer").count(), 0);
    assert.ok(await page.locator(".help-banner").isHidden());
    assert.ok(await talkButton(page).isVisible(), "a person is offered instead");
    assert.ok(await page.locator("#help-input").isEnabled());
    await type(page, "How do I share a report?");
    assert.match(await lastDesk(page).innerText(), /Sharing a research report/);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("the starter articles answer users about the app, not about running it", async () => {
    const { context, page, errors } = await helpPage();
    await type(page, "how do I delete my data?");
    const deleting = await lastDesk(page).innerText();
    assert.doesNotMatch(deleting, /e-mail|sign-in/i, "no question about a sign-in an anonymous owner does not have");
    assert.match(deleting, /From the article “Deleting your data”/);
    assert.match(deleting, /Delete this stream/);
    assert.doesNotMatch(deleting, /\*\*/, "the article's bold is shown as bold, not as asterisks");
    assert.equal(await lastDesk(page).locator("strong", { hasText: "Delete this stream" }).count(), 1);
    await page.click("button:has-text('New question')");
    await type(page, "it doesn't work");
    const broken = await lastDesk(page).innerText();
    assert.doesNotMatch(broken, /wrangler|deployed|Worker/);
    assert.match(broken, /Which page is it on: Guided chat, Streams, Research, Help or the assistant\?/);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("the question box is a comfortable size and the newest message stays in view", async () => {
    const wide = await helpPage();
    const box = await wide.page.locator("#help-input").boundingBox();
    const panel = await wide.page.locator(".panel.help").boundingBox();
    assert.ok(box.width >= panel.width * 0.7, `the box is ${box.width}px of a ${panel.width}px panel`);
    assert.ok(box.height >= 80, `the box is ${box.height}px tall`);
    await wide.context.close();

    // A laptop window split in two: below the wide layout's breakpoint.
    const { context, page, errors } = await helpPage({ width: 820, height: 620 });
    const questions = ["How do I share a report?", "Why are answers slow or stop midway?", "What is the offline provider?", "How do I use the assistant?", "too many requests", "My research job failed"];
    for (const question of questions) {
      await type(page, question);
      const seen = await page.evaluate(() => {
        const log = document.querySelector(".help-log").getBoundingClientRect();
        const newest = [...document.querySelectorAll(".help-log .msg.assistant")].at(-1).getBoundingClientRect();
        const input = document.querySelector("#help-input").getBoundingClientRect();
        const talk = [...document.querySelectorAll("button")].find((b) => b.textContent === "Talk to a person").getBoundingClientRect();
        return { log, newest, input, talk, height: window.innerHeight };
      });
      const where = JSON.stringify(seen);
      assert.ok(seen.newest.top >= seen.log.top - 2 && seen.newest.top < seen.log.bottom, `the newest reply starts outside the log: ${where}`);
      assert.ok(seen.newest.top >= 0 && seen.newest.top < seen.height - 20, `the newest reply starts off screen (${question}): ${where}`);
      assert.ok(seen.input.top >= 0 && seen.input.bottom <= seen.height + 1, `the question box is off screen: ${where}`);
      assert.ok(seen.talk.top >= 0 && seen.talk.bottom <= seen.height + 1, `"Talk to a person" is off screen: ${where}`);
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
});

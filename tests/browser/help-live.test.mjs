// Browser tests of live help-desk turns: playwright-core drives /usr/bin/chromium against
// `wrangler dev` with a fake provider whose answers take a while. A reload while the desk writes
// its answer joins the turn on the server and the answer shows once, with no second model call
// (while that join is on its way the question shows as being answered: one typed then waits, a
// second reload joins it still, a first question stopped then comes back into the box, and one
// whose join cannot reach the server yet is shown until it can be followed);
// Stop gives the turn up: nothing of it shows, the question goes back into the box, and asking
// again is answered. A question typed meanwhile waits, shown as queued (given back, unsent, behind
// an answer that fails, and beside a draft on New question); the handoff waits for the answer. With the session open in two tabs, a question asked in one streams in the
// other, Stop works from either, and a handoff made in one shows in the other; a question waiting
// at the server (another client's) is listed above the box in every tab, after a reload too; a tab
// opened during another tab's first question shows its answer as it is written. A question that
// waited at the server when its tab reloaded goes back into the box if its answer fails while
// the tab waits with another question. A reload whose read of the session comes back after a later
// question was answered shows that question and its answer once; a reload shows its question
// being answered before the session is read, so one typed then waits (both back if it fails); one
// whose read fails shows the session once the answer ends or fails.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { until } from "../e2e/harness.mjs";
import { stackWithFakeModel } from "./tabs.mjs";

const QUESTION = "Why are answers slow or stop midway?";
const ANSWER = "Answers slow down when the provider does; this one took its time.";
let stack;
let browser;

/** The desk's generation streams its answer one event each `ms` (translations at once): slow,
 * yet never idle for the provider timeout. */
const slowModel = (ms, reply = ANSWER) =>
  stack.fake.script((request) => (request.system?.startsWith("Translate") ? { reply: "[de]" } : { reply, paced: true, delayMs: ms }));

before(async () => ({ stack, browser } = await stackWithFakeModel()));
after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function helpPage() {
  const context = await browser.newContext({ viewport: { width: 1100, height: 860 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${stack.base}/#help`);
  await page.waitForSelector("#help-input");
  return { context, page, errors };
}

/** A Help page whose question QUESTION is being answered, paced `ms` an event. */
async function writing(ms) {
  slowModel(ms);
  const opened = await helpPage();
  await opened.page.fill("#help-input", QUESTION);
  await opened.page.press("#help-input", "Enter");
  await opened.page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
  return opened;
}

/** A Help page whose question QUESTION was answered (at once), ready for the next. */
async function answeredOnce() {
  slowModel(0);
  const opened = await helpPage();
  await opened.page.fill("#help-input", QUESTION);
  await opened.page.press("#help-input", "Enter");
  await opened.page.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 20000 });
  await opened.page.waitForSelector("#help-input:not([disabled])");
  return opened;
}

/** Holds `page`'s next join of a turn until the function answered is called. */
async function joinHeld(page) {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await page.route("**/api/help/sessions/*/stream", async (route) => (await held, await route.continue().catch(() => {})), { times: 1 });
  return release;
}

/** The log's messages as `class: their first 20 characters`. */
const logLines = (page) => page.locator(".help-log .msg").evaluateAll((all) => all.map((m) => `${m.className}: ${m.textContent.slice(0, 20)}`));

/** A session answered once in a first tab, then open in a second tab of the same browser. */
async function twoTabs() {
  slowModel(0);
  const { context, page: first, errors } = await helpPage();
  await first.fill("#help-input", QUESTION);
  await first.press("#help-input", "Enter");
  await first.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 20000 });
  const second = await context.newPage();
  second.on("pageerror", (error) => errors.push(error.message));
  await second.goto(`${stack.base}/#help`);
  await second.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 20000 });
  return { context, first, second, errors };
}

/** `page` asks `question` and, once its answer is being written, another tab of its browser
 * (`context`) opens the Help page: that tab. */
async function askThenOpen(context, page, question, errors) {
  await page.fill("#help-input", question);
  await page.press("#help-input", "Enter");
  await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
  const other = await context.newPage();
  other.on("pageerror", (error) => errors.push(error.message));
  await other.goto(`${stack.base}/#help`);
  return other;
}

const generations = (since) => stack.fake.requests.filter((r) => r.at >= since && r.kind && !r.system?.startsWith("Translate"));
const alerts = (page) => page.locator(".help [role=alert]:not([hidden])");

describe("live help-desk turns on the Help page", () => {
  test("a reload while the desk writes its answer joins the turn: the answer shows once, with one model call", async () => {
    slowModel(300);
    const { context, page, errors } = await helpPage();
    const since = Date.now();
    await page.fill("#help-input", QUESTION);
    await page.press("#help-input", "Enter");
    await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    await page.reload();
    await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 20000 });
    await page.waitForSelector("#help-input:not([disabled])");
    assert.equal(await page.locator(".help-log .msg.user", { hasText: QUESTION }).count(), 1, "the question shows once");
    assert.equal(await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).count(), 1, "the answer shows once");
    assert.equal(generations(since).length, 1, "one model call");
    assert.equal(await alerts(page).count(), 0, await alerts(page).allTextContents().then(String));
    // A second reload shows the stored session: nothing is joined again.
    await page.reload();
    await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor();
    assert.equal(await page.locator(".help-log .msg.user", { hasText: QUESTION }).count(), 1);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a reload whose join is slow to answer shows the question being answered meanwhile: one typed then waits for that answer, and is asked after it", async () => {
    const since = Date.now();
    const { context, page, errors } = await writing(250);
    const release = await joinHeld(page);
    await page.reload();
    // Before the join has answered: the question, Stop, and a question typed now waits.
    await page.locator(".help-log .msg.user", { hasText: QUESTION }).waitFor({ timeout: 20000 });
    await page.locator('.help [data-action="stop"]').waitFor({ state: "visible", timeout: 5000 });
    const next = "Answers stop midway and are slow, why?";
    await page.fill("#help-input", next);
    await page.press("#help-input", "Enter");
    await page.locator(".help-log .msg.user.queued", { hasText: next }).waitFor({ timeout: 5000 });
    assert.equal(generations(since).length, 1, "nothing more is asked while the answer is written");
    release();
    await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).nth(1).waitFor({ timeout: 30000 });
    await page.waitForSelector("#help-input:not([disabled])");
    assert.deepEqual(await logLines(page), [
      `msg user: ${QUESTION.slice(0, 20)}`,
      `msg assistant: ${ANSWER.slice(0, 20)}`,
      `msg user: ${next.slice(0, 20)}`,
      `msg assistant: ${ANSWER.slice(0, 20)}`,
    ]);
    assert.equal(generations(since).length, 2, "the reload asked nothing again");
    assert.equal(await alerts(page).count(), 0, await alerts(page).allTextContents().then(String));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a first question stopped while the reload's join is on the way comes back into the box, with a notice; a second reload meanwhile joins it still", async () => {
    const { context, page, errors } = await writing(250);
    const first = await joinHeld(page);
    await page.reload();
    await page.locator(".help-log .msg.user", { hasText: QUESTION }).waitFor({ timeout: 20000 });
    // Reloaded again while that join is held: the question is still the tab's to join.
    const second = await joinHeld(page);
    await page.reload();
    first();
    await page.locator(".help-log .msg.user", { hasText: QUESTION }).waitFor({ timeout: 20000 });
    await page.click('.help [data-action="stop"]');
    await until(async () => (await fetch(`${stack.base}/api/help/sessions/${await page.evaluate(() => JSON.parse(localStorage.getItem("stepwise.help.running.v1")).session_id)}/stream`, { headers: { authorization: `Bearer ${await page.evaluate(() => localStorage.getItem("stepwise.owner.v1"))}` } })).status === 404, 10000);
    second();
    await page.waitForFunction((q) => document.querySelector("#help-input").value === q, QUESTION, { timeout: 20000 });
    await alerts(page).filter({ hasText: "not answered" }).waitFor({ timeout: 5000 });
    assert.equal(await page.locator(".help-log .msg.user").count(), 0, "nothing of it was kept");
    assert.ok(!(await page.locator('.help [data-action="stop"]').isVisible()));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a reload whose join cannot reach the server yet shows the question being answered, says so, and shows the answer once the server is reached", async () => {
    const { context, page, errors } = await writing(400);
    // The quick tries (at once, then after 0.25, 1 and 3 s) fail; the next, 5 s on, gets through.
    await page.route("**/api/help/sessions/*/stream", (route) => route.abort(), { times: 4 });
    await page.reload();
    await alerts(page).filter({ hasText: "cannot be reached" }).waitFor({ timeout: 20000 });
    assert.equal(await page.locator(".help-log .msg.user", { hasText: QUESTION }).count(), 1, "the question is still shown");
    assert.ok(await page.locator('.help [data-action="stop"]').isVisible(), "as being answered");
    await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 30000 });
    await page.waitForSelector("#help-input:not([disabled])");
    assert.equal(await alerts(page).count(), 0, "the notice goes once the answer is followed");
    assert.equal(await page.locator(".help-log .msg.user", { hasText: QUESTION }).count(), 1);
    assert.equal(await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).count(), 1);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a reload whose read of the session comes back after a later question was answered shows that question and its answer once", async () => {
    const { context, page, errors } = await answeredOnce();
    const later = "And why do they stop midway?";
    const reply = "They stop when the provider drops the connection.";
    slowModel(200, reply);
    await page.fill("#help-input", later);
    await page.press("#help-input", "Enter");
    await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    const { session, owner } = await page.evaluate(() => ({ session: JSON.parse(localStorage.getItem("stepwise.help.running.v1")).session_id, owner: localStorage.getItem("stepwise.owner.v1") }));
    // The reload's read of the session is held until the answer is stored.
    let release;
    const held = new Promise((resolve) => (release = resolve));
    await page.route((url) => /\/api\/help\/sessions\/[^/]+$/.test(new URL(url).pathname), async (route) => (await held, await route.continue().catch(() => {})), { times: 1 });
    await page.reload();
    const stored = async () => (await (await fetch(`${stack.base}/api/help/sessions/${session}`, { headers: { authorization: `Bearer ${owner}` } })).json()).messages?.length;
    await until(async () => (await stored()) === 4, 20000);
    release();
    await page.locator(".help-log .msg.assistant", { hasText: reply }).first().waitFor({ timeout: 20000 });
    await page.waitForSelector("#help-input:not([disabled])");
    await new Promise((resolve) => setTimeout(resolve, 500)); // A join would have shown it again by now.
    assert.deepEqual(await logLines(page), [
      `msg user: ${QUESTION.slice(0, 20)}`,
      `msg assistant: ${ANSWER.slice(0, 20)}`,
      `msg user: ${later.slice(0, 20)}`,
      `msg assistant: ${reply.slice(0, 20)}`,
    ]);
    assert.equal(await alerts(page).count(), 0, await alerts(page).allTextContents().then(String));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a reload shows its question being answered before the session is read: one typed then waits, and both come back when that answer fails, the session shown whole", async () => {
    const { context, page, errors } = await answeredOnce();
    const failing = "Why do answers stop midway when cut?";
    stack.fake.script((request) => (request.system?.startsWith("Translate") ? { reply: "[de]" } : { reply: ANSWER.repeat(3), paced: true, delayMs: 250, fault: "cut" }));
    await page.fill("#help-input", failing);
    await page.press("#help-input", "Enter");
    await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    const { session, owner } = await page.evaluate(() => ({ session: JSON.parse(localStorage.getItem("stepwise.help.running.v1")).session_id, owner: localStorage.getItem("stepwise.owner.v1") }));
    let release;
    const held = new Promise((resolve) => (release = resolve));
    await page.route((url) => /\/api\/help\/sessions\/[^/]+$/.test(new URL(url).pathname), async (route) => (await held, await route.continue().catch(() => {})), { times: 1 });
    await page.reload();
    await page.locator(".help-log .msg.user", { hasText: failing }).waitFor({ timeout: 10000 });
    await page.fill("#help-input", "Typed during the read");
    await page.press("#help-input", "Enter");
    await page.locator(".help-log .msg.user.queued", { hasText: "Typed during the read" }).waitFor({ timeout: 5000 });
    const since = Date.now();
    // The answer fails (another client follows it to its end); then the read is let through.
    await (await fetch(`${stack.base}/api/help/sessions/${session}/stream?after=0`, { headers: { authorization: `Bearer ${owner}` } })).text();
    release();
    await page.waitForFunction((q) => document.querySelector("#help-input")?.value === `${q}\nTyped during the read`, failing, { timeout: 20000 });
    await alerts(page).first().waitFor({ timeout: 5000 });
    assert.deepEqual(await logLines(page), [`msg user: ${QUESTION.slice(0, 20)}`, `msg assistant: ${ANSWER.slice(0, 20)}`], "the session shows whole, the failed question not in it");
    assert.equal(stack.fake.requests.filter((r) => r.at >= since && JSON.stringify(r.body).includes("Typed during the read")).length, 0, "not asked");
    assert.deepEqual(errors, []);
    await context.close();
  });

  for (const fails of [false, true]) test(`a reload whose read of the session fails shows it once the question's answer ${fails ? "fails" : "ends"}, and the read's notice goes`, async () => {
    const { context, page, errors } = await answeredOnce();
    const later = "And why do they stop midway?";
    stack.fake.script((request) => (request.system?.startsWith("Translate") ? { reply: "[de]" } : { reply: ANSWER, paced: true, delayMs: 200, ...(fails ? { fault: "cut" } : {}) }));
    await page.fill("#help-input", later);
    await page.press("#help-input", "Enter");
    await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    await page.route((url) => /\/api\/help\/sessions\/[^/]+$/.test(new URL(url).pathname), (route) => route.abort(), { times: 1 });
    await page.reload();
    await alerts(page).filter({ hasText: "Reload to try again" }).waitFor({ timeout: 10000 });
    await page.waitForSelector("#help-input:not([disabled])", { timeout: 20000 });
    await page.locator(".help-log .msg.user", { hasText: QUESTION }).waitFor({ timeout: 10000 });
    const lines = [`msg user: ${QUESTION.slice(0, 20)}`, `msg assistant: ${ANSWER.slice(0, 20)}`];
    await until(async () => (await logLines(page)).length === (fails ? 2 : 4), 10000);
    assert.deepEqual(await logLines(page), fails ? lines : [...lines, `msg user: ${later.slice(0, 20)}`, `msg assistant: ${ANSWER.slice(0, 20)}`]);
    assert.equal(await alerts(page).filter({ hasText: "Reload to try again" }).count(), 0, "the read's notice is gone");
    if (fails) assert.equal(await page.inputValue("#help-input"), later, "the failed question is back");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a tab opened while the desk writes an answer follows it as the other tab's; that tab's reload still joins it as its own", async () => {
    const { context, first, errors } = await twoTabs();
    slowModel(250, ANSWER.repeat(3));
    const since = Date.now();
    const asked = "Answers stop midway and are slow, why?";
    const third = await askThenOpen(context, first, asked, errors);
    await third.locator(".help-log .msg.user", { hasText: asked }).waitFor({ timeout: 20000 });
    // The turn kept for a reload is the asking tab's, whichever tabs follow it.
    const keptBy = () => first.evaluate(() => JSON.parse(localStorage.getItem("stepwise.help.running.v1") ?? "null")?.tab);
    const firstTab = await first.evaluate(() => sessionStorage.getItem("stepwise.tab.v1"));
    assert.equal(await keptBy(), firstTab, "kept for the tab that asked");
    await first.reload();
    await first.locator(".help-log .msg.user", { hasText: asked }).waitFor({ timeout: 20000 });
    assert.equal(await keptBy(), firstTab, "joined again as its own, and kept for it");
    for (const page of [first, third]) {
      await page.locator(".help-log .msg.assistant").nth(1).waitFor({ timeout: 30000 });
      await page.waitForSelector("#help-input:not([disabled])");
      assert.equal(await page.locator(".help-log .msg.user", { hasText: asked }).count(), 1, "the question shows once");
      assert.equal(await page.locator(".help-log .msg.assistant").count(), 2, "each answer once");
    }
    assert.equal(generations(since).length, 1, "one model call");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a tab opened during another tab's first question streams its answer too, and shows the session after", async () => {
    slowModel(400, ANSWER.repeat(4));
    const { context, page: first, errors } = await helpPage();
    const since = Date.now();
    const second = await askThenOpen(context, first, QUESTION, errors);
    await second.locator(".help-log .msg.user", { hasText: QUESTION }).waitFor({ timeout: 20000 });
    await second.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 5000 });
    assert.ok(await first.locator(".help-progress", { hasText: "Writing the answer" }).isVisible(), "it shows there while it is written");
    for (const page of [first, second]) {
      await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 30000 });
      await page.waitForSelector("#help-input:not([disabled])");
      assert.equal(await page.locator(".help-log .msg.user", { hasText: QUESTION }).count(), 1, "the question shows once");
      assert.equal(await page.locator(".help-log .msg.assistant").count(), 1, "the answer once");
    }
    // The next question, asked in the second tab, goes to the same session.
    slowModel(0, "A second answer.");
    await second.fill("#help-input", "And a second question?");
    await second.press("#help-input", "Enter");
    await first.locator(".help-log .msg.assistant", { hasText: "A second answer." }).waitFor({ timeout: 20000 });
    assert.equal(await second.evaluate(() => localStorage.getItem("stepwise.help.session")), await first.evaluate(() => localStorage.getItem("stepwise.help.session")));
    assert.equal(generations(since).length, 2, "one model call each");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a tab following another tab's first question keeps its session when that tab is closed mid-answer, and keeps none when the question fails", async () => {
    slowModel(400, ANSWER.repeat(4));
    const { context, page: first, errors } = await helpPage();
    const second = await askThenOpen(context, first, QUESTION, errors);
    await second.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    await first.close();
    await second.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 30000 });
    await second.waitForSelector("#help-input:not([disabled])");
    const kept = await second.evaluate(() => localStorage.getItem("stepwise.help.session"));
    assert.match(kept ?? "", /^[0-9a-f]+$/, "the session answered is this browser's now");
    await second.reload();
    await second.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 20000 });
    // A first question that fails while another tab follows it leaves that tab no session.
    await second.click("button:has-text('New question')");
    stack.fake.script((request) => (request.system?.startsWith("Translate") ? { reply: "[de]" } : { reply: ANSWER.repeat(3), paced: true, delayMs: 250, fault: "cut" }));
    const third = await askThenOpen(context, second, "Answers stop midway and are slow, why?", errors);
    await third.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    await alerts(second).first().waitFor({ timeout: 20000 });
    await third.waitForSelector("#help-input:not([disabled])", { timeout: 20000 });
    await third.waitForFunction(() => !document.querySelector(".help-log .msg.user"), null, { timeout: 10000 });
    slowModel(0, "Answered in a session of its own.");
    await third.fill("#help-input", "Why are answers slow today?");
    await third.press("#help-input", "Enter");
    await third.locator(".help-log .msg.assistant", { hasText: "Answered in a session of its own." }).waitFor({ timeout: 20000 });
    assert.equal(await third.locator(".help-log .msg.user").count(), 1, "a new session");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("Stop gives the turn up: nothing of it shows, the question goes back into the box, and asking again is answered", async () => {
    slowModel(300, ANSWER.repeat(4));
    const { context, page, errors } = await helpPage();
    const since = Date.now();
    await page.fill("#help-input", QUESTION);
    await page.press("#help-input", "Enter");
    await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    await page.click('.help [data-action="stop"]');
    await alerts(page).filter({ hasText: "Stopped" }).waitFor({ timeout: 20000 });
    assert.ok(await until(() => generations(since)[0]?.closedEarly, 5000), "the provider saw its connection closed");
    assert.equal(await page.inputValue("#help-input"), QUESTION, "the question is back in the box");
    assert.equal(await page.locator(".help-log .msg.user").count(), 0, "nothing of the turn shows");
    assert.ok(await page.locator('.help [data-action="stop"]').isHidden(), "Stop shows only while a turn runs");
    slowModel(0);
    await page.press("#help-input", "Enter");
    await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 20000 });
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a question typed while the desk answers waits, shown as queued, and is asked when the answer ends", async () => {
    slowModel(250);
    const { context, page, errors } = await helpPage();
    await page.fill("#help-input", QUESTION);
    await page.press("#help-input", "Enter");
    await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    const next = "Answers stop midway and are slow, why?";
    await page.fill("#help-input", next);
    await page.press("#help-input", "Enter");
    await page.locator(".help-log .msg.user.queued", { hasText: next }).waitFor();
    assert.equal(await page.inputValue("#help-input"), "", "the box is free for a draft");
    assert.ok(await page.locator(".help-composer button[type=submit]").isDisabled(), "one question waits at a time");
    await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).nth(1).waitFor({ timeout: 30000 });
    await page.waitForSelector("#help-input:not([disabled])");
    assert.deepEqual(await logLines(page), [
      `msg user: ${QUESTION.slice(0, 20)}`,
      `msg assistant: ${ANSWER.slice(0, 20)}`,
      `msg user: ${next.slice(0, 20)}`,
      `msg assistant: ${ANSWER.slice(0, 20)}`,
    ]);
    assert.equal(await alerts(page).count(), 0, await alerts(page).allTextContents().then(String));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("while an answer is written the handoff waits; New question gives a queued question back beside a draft; one queued behind a failed answer goes back after it, unsent", async () => {
    const { context, page, errors } = await answeredOnce();
    slowModel(300);
    await page.fill("#help-input", "A second, slow question");
    await page.press("#help-input", "Enter");
    await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    assert.ok(await page.locator("button:has-text('Talk to a person')").isDisabled(), "no handoff while an answer is written");
    await page.fill("#help-input", "Queued question");
    await page.press("#help-input", "Enter");
    await page.locator(".help-log .msg.user.queued").waitFor();
    await page.fill("#help-input", "A draft");
    await page.click("button:has-text('New question')");
    assert.equal(await page.inputValue("#help-input"), "A draft\nQueued question", "the queued question beside the draft");

    stack.fake.script((request) => (request.system?.startsWith("Translate") ? { reply: "[de]" } : { reply: ANSWER.repeat(3), paced: true, delayMs: 250, fault: "cut" }));
    const since = Date.now();
    await page.fill("#help-input", "Why do answers stop midway when cut?");
    await page.press("#help-input", "Enter");
    await page.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    await page.fill("#help-input", "Behind the cut");
    await page.press("#help-input", "Enter");
    await page.locator(".help-log .msg.user.queued").waitFor();
    await alerts(page).first().waitFor({ timeout: 20000 });
    await page.waitForFunction(() => document.querySelector("#help-input")?.value === "Why do answers stop midway when cut?\nBehind the cut", null, { timeout: 10000 });
    assert.equal(stack.fake.requests.filter((r) => r.at >= since && JSON.stringify(r.body).includes("Behind the cut")).length, 0, "not asked");
    assert.ok(await alerts(page).first().isVisible(), "why the answer failed stays shown");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a question queued in a tab is never lost: Stop there, while another tab's answer is written, gives it back and leaves that answer alone; so does a reload", async () => {
    const { context, first, second, errors } = await twoTabs();
    slowModel(250, ANSWER.repeat(3));
    const since = Date.now();
    const again = "Answers stop midway and are slow, why?";
    await first.fill("#help-input", again);
    await first.press("#help-input", "Enter");
    await second.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    const mine = "Why do answers stop midway and get slow?";
    await second.fill("#help-input", mine);
    await second.press("#help-input", "Enter");
    await second.locator(".help-log .msg.user.queued", { hasText: mine }).waitFor();
    await second.locator('.help [data-action="stop"]:not([hidden])').click();
    await second.locator(".help-log .msg.user.queued").waitFor({ state: "detached" });
    assert.equal(await second.inputValue("#help-input"), mine, "the question is back in its box");
    for (const page of [first, second]) await page.locator(".help-log .msg.assistant").nth(1).waitFor({ timeout: 30000 });
    await first.waitForSelector("#help-input:not([disabled])");
    for (const page of [first, second]) assert.equal(await alerts(page).filter({ hasText: "Stopped" }).count(), 0, "the other tab's answer was not stopped");
    assert.equal(generations(since).length, 1, "the question given back was never asked");
    assert.equal(generations(since)[0].closedEarly, null);
    // Queued in the tab whose own answer is written, then reloaded: back in the box, not asked.
    await second.fill("#help-input", "");
    // (Another question: an answer is cached per owner, and a cached one is written at once.)
    await first.fill("#help-input", "Answers are slow: why?");
    await first.press("#help-input", "Enter");
    await first.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    const held = "And why is it slow today?";
    await first.fill("#help-input", held);
    await first.press("#help-input", "Enter");
    await first.locator(".help-log .msg.user.queued", { hasText: held }).waitFor();
    await first.reload();
    await first.locator(".help-log .msg.assistant").nth(2).waitFor({ timeout: 30000 });
    assert.equal(await first.inputValue("#help-input"), held, "the queued question is back in the box after the reload");
    assert.equal(generations(since).length, 2, "and it was not asked");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a question waiting at the server (asked by another client) is listed above the box in every tab, after a reload too, until it is withdrawn", async () => {
    const { context, first, second, errors } = await twoTabs();
    slowModel(250, ANSWER.repeat(3));
    const since = Date.now();
    await first.fill("#help-input", "Answers stop midway and are slow, why?");
    await first.press("#help-input", "Enter");
    await second.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    // The same owner's other client (the page queues in the tab, not at the server).
    const [owner, session] = await first.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), localStorage.getItem("stepwise.help.session")]);
    const other = "Why do answers stop midway and get slow?";
    const headers = { authorization: `Bearer ${owner}`, "content-type": "application/json" };
    const asked = await fetch(`${stack.base}/api/help`, { method: "POST", headers: { ...headers, accept: "text/event-stream" }, body: JSON.stringify({ session_id: session, message: other }) });
    assert.equal(asked.status, 200);
    const lined = (page) => page.locator(".waiting-line .waiting-item", { hasText: other });
    for (const page of [first, second]) await lined(page).waitFor({ timeout: 10000 });
    await second.reload();
    await lined(second).waitFor({ timeout: 15000 });
    assert.match(await lined(second).innerText(), /sent in another tab/);
    assert.equal(await lined(second).locator("button").count(), 0, "its own client withdraws it");
    const withdrawn = await fetch(`${stack.base}/api/help/sessions/${session}/stop`, { method: "POST", headers, body: JSON.stringify({ waiting: asked.headers.get("x-stepwise-waiting"), withdraw: true }) });
    assert.deepEqual(await withdrawn.json(), { stopped: true });
    for (const page of [first, second]) await page.waitForSelector(".waiting-line", { state: "hidden", timeout: 10000 });
    assert.match(await asked.text(), /event: stopped/, "its client's stream says it was stopped");
    for (const page of [first, second]) await page.locator(".help-log .msg.assistant").nth(1).waitFor({ timeout: 30000 });
    await first.waitForSelector("#help-input:not([disabled])");
    for (const page of [first, second]) assert.equal(await alerts(page).filter({ hasText: "Stopped" }).count(), 0, "the answer it waited for was not stopped");
    assert.equal(generations(since).length, 1, "the question withdrawn was never asked");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a question that waited at the server when its tab reloaded, whose answer fails while the tab waits with another question, goes back into the box", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 860 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // The session's socket tells this tab everything 1.5 s late: its question is sent before it
    // knows of the turn running, and it learns of its own question's turn after it asked another.
    await page.routeWebSocket(/\/ws$/, (ws) => ws.connectToServer().onMessage((message) => setTimeout(() => ws.send(message), 1500)));
    slowModel(0);
    await page.goto(`${stack.base}/#help`);
    await page.fill("#help-input", QUESTION);
    await page.press("#help-input", "Enter");
    await page.locator(".help-log .msg.assistant", { hasText: ANSWER }).waitFor({ timeout: 20000 });
    const [running, failing, later] = ["Why are answers slow at night?", "Why do answers stop midway at night?", "Why are answers slow in the morning?"];
    // (The latest question first: a generation's request holds the session's earlier ones.)
    stack.fake.script((request) => {
      const asked = JSON.stringify(request.body ?? "");
      if (request.system?.startsWith("Translate")) return { reply: "[de]" };
      if (asked.includes(later)) return { reply: "Mornings are quiet." };
      // Each long enough for the tab to ask the next question meanwhile (paced by line).
      // (The failing one fails halfway, about 5 s in: well after this tab, told 1.5 s late, joins it.)
      const long = (lines) => Array(lines).fill(ANSWER).join("\n");
      if (asked.includes(failing)) return { reply: long(24), paced: true, delayMs: 400, fault: "cut" };
      return { reply: long(16), paced: true, delayMs: 400 };
    });
    const since = Date.now();
    try {
      // The same owner's other client asks first; this tab's question waits behind it.
      const [owner, session] = await page.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), localStorage.getItem("stepwise.help.session")]);
      const other = await fetch(`${stack.base}/api/help`, { method: "POST", headers: { authorization: `Bearer ${owner}`, "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify({ session_id: session, message: running }) });
      assert.equal(other.status, 200);
      await page.fill("#help-input", failing);
      await page.press("#help-input", "Enter");
      await page.locator(".help-progress", { hasText: "Queued" }).waitFor({ timeout: 10000 });
      await page.reload();
      await page.locator(".waiting-line .waiting-item", { hasText: failing }).waitFor({ timeout: 15000 });
      // Reloaded, it follows the other client's answer, and asks another question meanwhile: it
      // is sent when that answer ends, and waits at the server behind the first one's turn.
      await page.locator(".help-log .msg.user", { hasText: running }).waitFor({ timeout: 15000 });
      await page.fill("#help-input", later);
      await page.press("#help-input", "Enter");
      await page.locator(".help-log .msg.assistant", { hasText: "Mornings are quiet." }).waitFor({ timeout: 60000 });
      await page.waitForFunction((text) => document.querySelector("#help-input").value.includes(text), failing, { timeout: 10000 });
      await alerts(page).first().waitFor({ timeout: 5000 });
      assert.equal(await page.locator(".help-log .msg.user", { hasText: failing }).count(), 0, "nothing of it was kept");
      assert.equal(generations(since).filter((r) => JSON.stringify(r.body ?? "").includes(failing) && !JSON.stringify(r.body ?? "").includes(later)).length, 1, "its question was asked once");
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test("two tabs of a session: a question asked in one is answered in both, Stop works from the other, a handoff shows in both", async () => {
    const { context, first, second, errors } = await twoTabs();
    // Asked in the second tab: the first shows the question, the desk's progress and the answer.
    const again = "Answers stop midway and are slow, why?";
    slowModel(250);
    await second.fill("#help-input", again);
    await second.press("#help-input", "Enter");
    await first.locator(".help-log .msg.user", { hasText: again }).waitFor({ timeout: 20000 });
    await first.locator(".help-progress", { hasText: "Writing the answer" }).waitFor({ timeout: 20000 });
    await first.locator(".help-log .msg.assistant", { hasText: ANSWER }).nth(1).waitFor({ timeout: 20000 });
    await second.locator(".help-log .msg.assistant", { hasText: ANSWER }).nth(1).waitFor({ timeout: 20000 });
    await first.waitForSelector("#help-input:not([disabled])");
    for (const page of [first, second]) assert.equal(await page.locator(".help-log .msg").count(), 4, "each message once in each tab");
    // Asked in the first, stopped from the second: both drop it; the question goes back only
    // into the box it was typed in.
    slowModel(300, ANSWER.repeat(4));
    const third = "Why do answers stop midway and get slow?";
    await first.fill("#help-input", third);
    await first.press("#help-input", "Enter");
    await second.locator(".help-log .msg.user", { hasText: third }).waitFor({ timeout: 20000 });
    await second.locator('.help [data-action="stop"]:not([hidden])').click();
    await alerts(first).filter({ hasText: "Stopped" }).waitFor({ timeout: 20000 });
    await alerts(second).filter({ hasText: "Stopped" }).waitFor({ timeout: 20000 });
    assert.equal(await first.inputValue("#help-input"), third);
    assert.equal(await second.inputValue("#help-input"), "");
    for (const page of [first, second]) assert.equal(await page.locator(".help-log .msg.user", { hasText: third }).count(), 0);
    // A handoff from the first tab's button shows in the second without a reload.
    await first.fill("#help-input", "");
    await first.click("text=Talk to a person");
    await second.locator(".help-banner.escalated").waitFor({ timeout: 20000 });
    assert.deepEqual(errors, []);
    await context.close();
  });
});

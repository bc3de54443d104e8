// Browser end-to-end test of live guided-chat turns: playwright-core drives /usr/bin/chromium
// against `wrangler dev` with a fake provider that paces its answer. The first answer of a new
// conversation is reloaded mid-way: the page joins the turn on the server and the answer streams
// on, then completes once; the next answer is stopped with Stop: it stays as far as it got,
// marked stopped, and the conversation takes the next message. A connection that breaks mid-answer
// is joined again where it broke off; Start over during a first turn stops it. With the
// conversation open in two tabs, a turn sent in one streams in the other, and Stop in either
// stops it in both; a field editor open in the other tab keeps what was typed and saves once the
// answer has ended; a tab opened while an answer streams follows it as the other tab's (a duplicated
// tab too, while a tab restored after a crash keeps its own turn and queued message); a turn that
// began and ended while a tab's socket was down shows there once it is back; a message that waited
// for the page's own answer waits too for another client's turn begun as it ended; a socket that
// lags behind the page's own stream shows its turn once. A message typed while the answer streams
// waits, shown as queued, and is answered right after; behind an answer that fails, or across a
// Start over, it goes back into the box instead. (Reloads at awkward moments: guided-reload.)
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { until } from "../e2e/harness.mjs";
import { cuttableSocket, stackWithFakeModel } from "./tabs.mjs";
import { answers, guidedPages, LINES, linesOf, REPLY, say, whenIdle, whenLines } from "./guided.mjs";

let stack;
let browser;
const { pacedModel, chatPage, answering } = guidedPages(() => ({ stack, browser }));

before(async () => ({ stack, browser } = await stackWithFakeModel()));
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** `page` sends a first message whose paced answer (`delayMs` a line) is being written, and
 * queues `queued` behind it. */
async function answeringWithQueued(page, delayMs, queued) {
  stack.fake.script(() => ({ reply: REPLY, paced: true, delayMs }));
  await say(page, "Track rivals");
  await whenLines(page, 3);
  await say(page, queued);
  await page.locator(".chat-layout .log .msg.user.queued").waitFor();
}

/** A new page of `context` loaded with `storage` as its sessionStorage (JSON of a tab's), as a
 * browser's Duplicate or its restore after a crash makes it; its page errors go to `errors`. */
async function pageWithSession(context, storage, errors) {
  const page = await context.newPage();
  page.on("pageerror", (error) => errors.push(error.message));
  await page.addInitScript((storage) => {
    if (sessionStorage.getItem("test.copied")) return;
    for (const [key, value] of Object.entries(JSON.parse(storage))) sessionStorage.setItem(key, value);
    sessionStorage.setItem("test.copied", "1");
  }, storage);
  await page.goto(stack.base + "/#chat");
  return page;
}

/** `first` sends a first message, answered `reply` (which begins "Noted."); `second` then opens
 * the conversation and shows that answer. */
async function answeredThenOpened(first, second, reply) {
  stack.fake.script(() => ({ reply }));
  await first.goto(stack.base + "/#chat");
  await say(first, "Track rivals");
  await whenIdle(first);
  await second.goto(stack.base + "/#chat");
  await second.locator(".chat-layout .log .msg.assistant", { hasText: "Noted." }).waitFor({ timeout: 20000 });
}

/** The JSON of `page`'s sessionStorage. */
const sessionOf = (page) => page.evaluate(() => JSON.stringify(Object.fromEntries(Object.entries(sessionStorage))));

describe("live guided turns in the chat", () => {
  test("a reload mid-answer joins the turn and the answer goes on; Stop keeps the answer so far, marked stopped", async () => {
    const { context, page, errors } = await answering(5);
    const calls = stack.fake.requests.length;
    // While the answer streams, a field edit waits for it (the server would refuse it).
    for (const pencil of await page.locator(".config dt button").all()) assert.ok(await pencil.isDisabled());
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
    await say(page, "Tell me more");
    await whenLines(page, 4);
    await page.click('[data-action="stop"]');
    await page.locator(".chat-layout .log .msg.assistant.stopped").waitFor({ timeout: 20000 });
    await whenIdle(page);
    const stopped = await page.locator(".chat-layout .log .msg.assistant.stopped").textContent();
    assert.match(stopped, /\(stopped\)$/);
    assert.ok(linesOf(stopped) < LINES, stopped);
    // The conversation takes the next message (the stopped answer was a turn on the server).
    stack.fake.script(() => ({ reply: "A short one." }));
    await say(page, "Next");
    await page.locator(".chat-layout .log .msg.assistant", { hasText: "A short one." }).waitFor({ timeout: 20000 });
    assert.equal(await page.locator(".chat-layout [role=alert]").count(), 0, await page.locator(".chat-layout [role=alert]").allTextContents().then(String));
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe("a guided turn whose page loses it", () => {
  test("a connection that breaks mid-answer is joined again after its last event: the answer shows whole, once, with no error", async () => {
    pacedModel();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const joins = [];
    page.on("request", (request) => {
      if (request.url().includes("/stream")) joins.push(request.headers()["last-event-id"] ?? null);
    });
    // The first turn's stream breaks after its first third (the server's answer goes on).
    await page.route("**/api/chat", async (route) => {
      const response = await route.fetch();
      const body = await response.text();
      const cut = body.indexOf("\n\n", Math.floor(body.length / 3)) + 2;
      await route.fulfill({ response, body: body.slice(0, cut) });
    });
    await page.goto(stack.base + "/#chat");
    await say(page, "Track rivals");
    await whenLines(page, LINES);
    await whenIdle(page);
    assert.equal(joins.length, 1, "joined once");
    assert.match(joins[0] ?? "", /^\d+$/, "joined after the last event read");
    assert.equal(linesOf(await answers(page).last().textContent()), LINES);
    assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).count(), 1, "the question shows once");
    assert.equal(await page.locator(".chat-layout [role=alert]").count(), 0, await page.locator(".chat-layout [role=alert]").allTextContents().then(String));
    const saved = await page.evaluate(() => JSON.parse(localStorage.getItem("stepwise.chat.v1")));
    assert.ok(saved.conversation_id, "the first turn's conversation is the page's");
    assert.equal(await page.evaluate(() => localStorage.getItem("stepwise.chat.running.v1")), null, "no turn is kept for a reload");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("Start over during a first turn stops it: nothing of it shows, and the next message starts a new conversation", async () => {
    const { context, page, errors } = await chatPage();
    const answered = page.waitForResponse((r) => r.url().endsWith("/api/chat"));
    await say(page, "Track rivals");
    const stoppedId = (await answered).headers()["x-stepwise-conversation"];
    await whenLines(page, 3);
    const call = stack.fake.requests.at(-1);
    await page.click("text=Start over");
    await page.waitForFunction(() => !document.querySelector("#chat-input")?.disabled, null, { timeout: 20000 });
    assert.ok(await until(() => call.closedEarly, 5000), "the provider saw the turn stopped");
    assert.equal(await page.locator(".chat-layout .log .msg.user").count(), 0, "nothing of the turn shows");
    assert.equal(await page.locator(".chat-layout [role=alert]").count(), 0);
    const saved = await page.evaluate(() => JSON.parse(localStorage.getItem("stepwise.chat.v1") ?? "null"));
    assert.equal(saved?.conversation_id, undefined, "the stopped first turn's conversation is not the page's");
    stack.fake.script(() => ({ reply: "A fresh start." }));
    try {
      await say(page, "Track rivals again");
      await page.locator(".chat-layout .log .msg.assistant", { hasText: "A fresh start." }).waitFor({ timeout: 20000 });
      // The answer's text shows before its `complete` event makes the conversation the page's.
      await whenIdle(page);
      const after = await page.evaluate(() => JSON.parse(localStorage.getItem("stepwise.chat.v1")));
      assert.ok(stoppedId && after.conversation_id && after.conversation_id !== stoppedId, `${stoppedId} / ${after.conversation_id}`);
    } finally {
      pacedModel();
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe("a guided conversation open in two tabs", () => {
  test("a turn sent in one tab streams in the other, and Stop in either stops it in both", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const first = await context.newPage();
    const errors = [];
    first.on("pageerror", (error) => errors.push(error.message));
    stack.fake.script(() => ({ reply: "Noted." }));
    await first.goto(stack.base + "/#chat");
    await say(first, "Track rivals");
    await first.locator(".chat-layout .log .msg.assistant", { hasText: "Noted." }).waitFor({ timeout: 20000 });
    await whenIdle(first);
    const second = await context.newPage();
    second.on("pageerror", (error) => errors.push(error.message));
    await second.goto(stack.base + "/#chat");
    await second.locator(".chat-layout .log .msg.assistant", { hasText: "Noted." }).waitFor();
    // The second tab's socket is open once the page has shown the conversation.
    await second.waitForTimeout(500);

    stack.fake.script(() => ({ reply: REPLY, paced: true, delayMs: 100 }));
    await say(first, "Tell me more");
    await second.locator(".chat-layout .log .msg.user", { hasText: "Tell me more" }).waitFor({ timeout: 20000 });
    await whenLines(second, 5);
    assert.ok(await second.locator("#chat-input").isDisabled(), "the other tab waits for the answer");
    await whenLines(second, LINES);
    await whenIdle(second);
    await whenIdle(first);
    assert.equal(linesOf(await answers(second).last().textContent()), LINES);
    assert.equal(await second.locator(".chat-layout .log .msg.user", { hasText: "Tell me more" }).count(), 1, "the message shows once");

    // Stop in the tab that did not send it: both tabs show the answer stopped.
    await say(first, "And again");
    await second.locator(".chat-layout .log .msg.user", { hasText: "And again" }).waitFor({ timeout: 20000 });
    await whenLines(second, 3);
    await second.click('[data-action="stop"]');
    for (const page of [first, second]) {
      await page.locator(".chat-layout .log .msg.assistant.stopped").last().waitFor({ timeout: 20000 }).catch(async (error) => {
        const log = await page.locator(".chat-layout .log").innerHTML();
        const notice = await page.locator(".chat-layout [aria-live=assertive]").innerHTML();
        throw new Error(`${page === first ? "sending" : "other"} tab: ${error.message}\n${log.slice(-1500)}\n${notice}`);
      });
      await whenIdle(page);
    }
    assert.equal(await second.locator(".chat-layout [role=alert]").count(), 0, await second.locator(".chat-layout [role=alert]").allTextContents().then(String));
    // The second tab, up to date, takes the next turn.
    stack.fake.script(() => ({ reply: "From the second tab." }));
    await say(second, "Next");
    await second.locator(".chat-layout .log .msg.assistant", { hasText: "From the second tab." }).waitFor({ timeout: 20000 });
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a field editor open in one tab when the other tab's turn begins keeps what was typed: its Save waits for the answer to end, then saves", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    const [first, second] = [await context.newPage(), await context.newPage()];
    for (const page of [first, second]) page.on("pageerror", (error) => errors.push(error.message));
    await answeredThenOpened(first, second, "Noted.");
    await second.waitForTimeout(500);
    await second.click("button[aria-label='Edit purpose']");
    await second.fill("#edit-purpose", "Track rival launches in Europe");

    stack.fake.script(() => ({ reply: REPLY, paced: true, delayMs: 60 }));
    await say(first, "Tell me more");
    await whenLines(second, 3);
    const save = second.locator(".config dd button[type=submit]");
    assert.ok(await save.isDisabled(), "the edit cannot be saved while the answer is written");
    await whenIdle(second);
    assert.equal(await second.inputValue("#edit-purpose"), "Track rival launches in Europe", "what was typed is kept");
    await save.click();
    await second.locator('dd[data-field="purpose"]', { hasText: "Track rival launches in Europe" }).waitFor();
    assert.equal(await second.locator(".chat-layout [role=alert]").count(), 0, await second.locator(".chat-layout [role=alert]").allTextContents().then(String));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a tab opened while an answer streams follows it as the other tab's: it waits for it, both show the same log after, and the first tab's reload still joins it as its own", async () => {
    const { context, page: first, errors } = await chatPage();
    stack.fake.script(() => ({ reply: "Noted." }));
    await say(first, "Track rivals");
    await first.locator(".chat-layout .log .msg.assistant", { hasText: "Noted." }).waitFor({ timeout: 20000 });
    await whenIdle(first);
    stack.fake.script(() => ({ reply: REPLY, paced: true, delayMs: 100 }));
    await say(first, "Tell me more");
    await whenLines(first, 3);
    const second = await context.newPage();
    second.on("pageerror", (error) => errors.push(error.message));
    await second.goto(stack.base + "/#chat");
    await second.locator(".chat-layout .log .msg.user", { hasText: "Tell me more" }).waitFor({ timeout: 20000 });
    await whenLines(second, 8);
    assert.ok(await second.locator("#chat-input").isDisabled(), "the new tab waits for the other tab's answer: nothing to queue there");
    assert.ok(await first.locator("#chat-input").isEnabled(), "the tab that sent it may queue a message");
    // The first tab's reload still joins the turn as its own: it may queue a message there.
    await first.reload();
    await first.locator(".chat-layout .log .msg.user", { hasText: "Tell me more" }).waitFor({ timeout: 20000 });
    await first.locator(".chat-layout .log .msg.assistant[aria-busy]").waitFor();
    assert.ok(await first.locator("#chat-input").isEnabled(), "its own answer, joined again");
    assert.ok(await second.locator("#chat-input").isDisabled(), "still the other tab's here");
    for (const page of [first, second]) await whenIdle(page);
    const logOf = (page) => page.locator(".chat-layout .log .msg").evaluateAll((all) => all.map((m) => `${m.className.includes("user") ? "user" : "assistant"}: ${m.textContent.trim().slice(0, 40)}`));
    assert.deepEqual(await logOf(second), await logOf(first), "both tabs show the same conversation");
    assert.match((await logOf(first))[0], /^assistant: Let's set this up step by step/, "the greeting first, after a reload too");
    assert.equal(await second.locator(".chat-layout .log .msg.user", { hasText: "Tell me more" }).count(), 1);
    assert.equal(linesOf(await answers(second).last().textContent()), LINES);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a duplicate of the tab (its sessionStorage copied) follows the answer as the other tab's and does not take its queued message; its reload keeps its own id", async () => {
    const { context, page: first, errors } = await chatPage();
    await answeringWithQueued(first, 100, "Queued in the first tab");
    // What a browser's Duplicate does: a new tab with a copy of this one's sessionStorage.
    const duplicate = await pageWithSession(context, await sessionOf(first), errors);
    await duplicate.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).waitFor({ timeout: 20000 });
    await whenLines(duplicate, 5);
    const tabOf = (page) => page.evaluate(() => sessionStorage.getItem("stepwise.tab.v1"));
    const firstTab = await tabOf(first);
    const duplicateTab = await tabOf(duplicate);
    assert.notEqual(duplicateTab, firstTab, "the duplicate has an id of its own");
    assert.ok(await duplicate.locator("#chat-input").isDisabled(), "it waits for the other tab's answer");
    assert.equal(await duplicate.inputValue("#chat-input"), "", "the first tab's queued message is not put into its box");
    await duplicate.reload();
    await duplicate.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).waitFor({ timeout: 20000 });
    assert.equal(await tabOf(duplicate), duplicateTab, "its reload keeps its id");
    for (const page of [first, duplicate]) await page.locator(".chat-layout .log .msg.user:not(.queued)", { hasText: "Queued in the first tab" }).waitFor({ timeout: 30000 });
    for (const page of [first, duplicate]) await whenIdle(page);
    for (const page of [first, duplicate]) assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Queued in the first tab" }).count(), 1, "sent once");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a tab restored after a crash (its sessionStorage as it was, no live tab of its id) keeps its id: its own answer streams on as its own, and its queued message comes back into its box", async () => {
    const { context, page: first, errors } = await chatPage();
    await answeringWithQueued(first, 150, "Queued before the crash");
    // The tab as a crash left it: its sessionStorage, the page still marked as shown; then the
    // tab is gone, and the browser restores it.
    const kept = await sessionOf(first);
    const firstTab = JSON.parse(kept)["stepwise.tab.v1"];
    await first.close();
    const restored = await pageWithSession(context, kept, errors);
    await restored.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).waitFor({ timeout: 20000 });
    assert.equal(await restored.evaluate(() => sessionStorage.getItem("stepwise.tab.v1")), firstTab, "it keeps its id");
    await restored.waitForFunction(() => document.querySelector("#chat-input").value === "Queued before the crash", null, { timeout: 10000 });
    await whenIdle(restored);
    assert.match(await restored.locator(".chat-layout .log .msg.assistant").last().innerText(), /Line 30 of/, "its own answer, whole");
    assert.equal(await restored.locator(".chat-layout .log .msg.user", { hasText: "Queued before the crash" }).count(), 0, "the queued message was never sent");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a turn that begins and ends while a tab's live connection is down shows there once the connection is back", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    const pages = [];
    for (let i = 0; i < 2; i++) {
      const page = await context.newPage();
      page.on("pageerror", (error) => errors.push(error.message));
      pages.push(page);
    }
    const [first, second] = pages;
    const socket = await cuttableSocket(first);
    await answeredThenOpened(first, second, "Noted.\nEXTRACTED_DATA: purpose=Track rivals\nWhich business goals?\n");
    await first.waitForTimeout(1000); // the first tab's socket is open
    await socket.cut();
    stack.fake.script(() => ({ reply: "Good, partners it is.\nEXTRACTED_DATA: business_goals=Find partners\nWhat type of stream is this?\n" }));
    await say(second, "Find partners");
    await second.locator(".chat-layout .log .msg.assistant", { hasText: "Good, partners it is." }).waitFor({ timeout: 20000 });
    await whenIdle(second);
    assert.equal(await first.locator(".chat-layout .log .msg.user", { hasText: "Find partners" }).count(), 0, "not seen while the socket was down");
    socket.restore();
    await first.locator(".chat-layout .log .msg.assistant", { hasText: "Good, partners it is." }).waitFor({ timeout: 30000 });
    await first.waitForSelector('.steps li[aria-current="step"][data-step="stream_type"]', { timeout: 10000 });
    assert.equal(await first.locator(".chat-layout .log .msg.user", { hasText: "Find partners" }).count(), 1);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a message that waited behind another tab's turn (its tab not yet told of it) shows that turn before its own, and so does a reload", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    const open = async (lag) => {
      const page = await context.newPage();
      page.on("pageerror", (error) => errors.push(error.message));
      // This tab's socket tells it of other tabs' turns 1.5 s late.
      if (lag) await page.routeWebSocket(/\/ws$/, (ws) => ws.connectToServer().onMessage((message) => setTimeout(() => ws.send(message), 1500)));
      await page.goto(stack.base + "/#chat");
      return page;
    };
    stack.fake.script(() => ({ reply: "Noted.\nEXTRACTED_DATA: purpose=Track rivals\nWhich business goals?\n" }));
    const first = await open(true);
    await say(first, "Track rivals");
    await whenIdle(first);
    const second = await open(false);
    await second.locator(".chat-layout .log .msg.assistant", { hasText: "Noted." }).waitFor({ timeout: 20000 });
    await first.waitForTimeout(2000); // both sockets open
    stack.fake.script(() => ({ reply: "Line 1.\nLine 2.\nLine 3.\nLine 4.\nLine 5.", paced: true, delayMs: 150 }));
    await say(second, "From the second tab");
    await first.waitForTimeout(300);
    await say(first, "From the first tab");
    const users = (page) => page.locator(".chat-layout .log .msg.user").allInnerTexts();
    const both = ["Track rivals", "From the second tab", "From the first tab"];
    await first.waitForFunction((n) => document.querySelectorAll(".chat-layout .log .msg.user").length === n && !document.querySelector(".chat-layout .log [aria-busy]"), both.length, { timeout: 30000 });
    assert.deepEqual(await users(first), both, "the other tab's turn shows before this tab's, which waited behind it");
    await whenIdle(second);
    await second.waitForFunction((n) => document.querySelectorAll(".chat-layout .log .msg.user").length === n, both.length, { timeout: 30000 });
    assert.deepEqual(await users(second), both);
    await first.reload();
    await first.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).waitFor({ timeout: 20000 });
    await first.waitForTimeout(1000); // the server's log read
    assert.deepEqual(await users(first), both, "after a reload too (the server's log, not the copy kept)");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a message that waited for the page's own answer, another client's turn having begun as that answer ended, waits for that turn too: it shows, then the message is sent", async () => {
    const { context, page, errors } = await chatPage();
    const said = (request) => JSON.stringify(request.body?.messages?.at(-1) ?? "");
    stack.fake.script((request) => (said(request).includes("Queued behind both") ? { reply: "Noted." } : { reply: REPLY, paced: true, delayMs: 60 }));
    try {
      await say(page, "Track rivals");
      await whenIdle(page);
      await say(page, "Mine first");
      await whenLines(page, 3);
      await say(page, "Queued behind both");
      await page.locator(".chat-layout .log .msg.user.queued").waitFor();
      // Another client of the same owner sends while this page's answer runs: it waits at the
      // server, and its turn begins as this page's answer ends.
      const [owner, saved] = await page.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), JSON.parse(localStorage.getItem("stepwise.chat.v1"))]);
      const headers = { authorization: `Bearer ${owner}`, "x-conversation-token": saved.token, "content-type": "application/json", accept: "text/event-stream" };
      const other = await fetch(`${stack.base}/api/chat`, { method: "POST", headers, body: JSON.stringify({ conversation_id: saved.conversation_id, turns: saved.turns, message: "From another client" }) });
      assert.equal(other.status, 200);
      // That turn shows here while it runs, above the message that still waits.
      await page.locator(".chat-layout .log .msg.user:not(.queued)", { hasText: "From another client" }).waitFor({ timeout: 30000 });
      assert.equal(await page.locator(".chat-layout .log .msg.user.queued", { hasText: "Queued behind both" }).count(), 1, "still waiting");
      assert.equal(stack.fake.requests.filter((r) => said(r).includes("Queued behind both")).length, 0, "not sent while that turn runs");
      await other.text();
      await until(() => stack.fake.requests.some((r) => said(r).includes("Queued behind both")), 20000);
      await page.locator(".chat-layout .log .msg.assistant", { hasText: "Noted." }).waitFor({ timeout: 20000 });
      await whenIdle(page);
      assert.deepEqual(await page.locator(".chat-layout .log .msg.user").allTextContents(), ["Track rivals", "Mine first", "From another client", "Queued behind both"]);
      assert.deepEqual(errors, []);
    } finally {
      pacedModel();
      await context.close();
    }
  });

  test("a live connection that lags behind the answer's own stream shows the answer once, and its chips enabled", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // Every message of the conversation's WebSocket reaches the page 1.5 s late: the page's own
    // turn has ended on its stream before the socket says it began.
    await page.routeWebSocket(/\/ws$/, (ws) => {
      const server = ws.connectToServer();
      server.onMessage((message) => setTimeout(() => ws.send(message), 1500));
    });
    stack.fake.script(() => ({ reply: "Noted.\nEXTRACTED_DATA: purpose=Track rivals\nWhich business goals?\nSUGGESTIONS: Spot launches early, Find partners\n" }));
    await page.goto(stack.base + "/#chat");
    await say(page, "Track rivals");
    await whenIdle(page);
    await page.waitForTimeout(500); // the socket is open
    stack.fake.script(() => ({ reply: "Good.\nEXTRACTED_DATA: business_goals=Find partners\nWhat type of stream is this?\nSUGGESTIONS: competitive, scientific\n" }));
    await page.click(".chip >> text=Find partners");
    await page.locator(".chat-layout .log .msg.assistant", { hasText: "Good." }).waitFor({ timeout: 20000 });
    await page.waitForTimeout(3000); // the socket's late replay of that turn has come
    await whenIdle(page);
    assert.ok(await page.locator(".chip >> text=scientific").isEnabled(), "the next step's chips can be pressed");
    assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Find partners" }).count(), 1, "the turn is shown once");
    await page.click(".chip >> text=scientific", { timeout: 5000 });
    await page.waitForSelector('.steps li[aria-current="step"][data-step="focus_areas"]', { timeout: 20000 });
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe("a message typed while the answer streams", () => {
  test("it waits, shown as queued, and is sent and answered right after the answer, in order", async () => {
    const { context, page, errors } = await answering();
    const since = Date.now();
    // The box takes a message while the answer streams; it waits, marked queued.
    await say(page, "Then this");
    await page.locator(".chat-layout .log .msg.user.queued", { hasText: "Then this" }).waitFor();
    assert.equal(stack.fake.requests.filter((r) => r.at >= since).length, 0, "nothing sent while the answer streams");
    stack.fake.script(() => ({ reply: "The answer to the second." }));
    await page.locator(".chat-layout .log .msg.assistant", { hasText: "The answer to the second." }).waitFor({ timeout: 30000 });
    await whenIdle(page);
    const order = await page.locator(".chat-layout .log .msg").evaluateAll((all) => all.map((m) => (m.classList.contains("user") ? `user: ${m.firstChild?.textContent}` : "assistant")));
    assert.deepEqual(order.slice(-4), ["user: Track rivals", "assistant", "user: Then this", "assistant"]);
    assert.equal(await page.locator(".chat-layout .log .msg.queued").count(), 0, "no longer queued");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a message queued behind an answer that fails goes back into the box after the failed one, and the error stays; Start over gives a queued message back", async () => {
    const { context, page, errors } = await chatPage();
    // The first answer streams two lines, then the connection to the provider is cut.
    stack.fake.script((request) => (request.system?.includes("Stepwise assistant") ? { reply: "Other." } : { reply: REPLY, paced: true, delayMs: 150, fault: "cut" }));
    const since = Date.now();
    await say(page, "Track rivals, cut");
    await whenLines(page, 1);
    await say(page, "Queued behind it");
    await page.locator(".chat-layout .log .msg.user.queued").waitFor();
    await page.locator(".chat-layout .error[role=alert]").waitFor({ timeout: 20000 });
    await whenIdle(page);
    assert.equal(await page.inputValue("#chat-input"), "Track rivals, cut Queued behind it", "both back, in order");
    assert.equal(stack.fake.requests.filter((r) => r.at >= since && JSON.stringify(r.body).includes("Queued behind it")).length, 0, "the queued one was not sent");
    assert.ok(await page.locator(".chat-layout .error[role=alert]").isVisible(), "the error stays to be read");
    assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals, cut" }).count(), 0, "the failed message left the log");

    pacedModel();
    await say(page, "Track rivals");
    await whenLines(page, 2);
    await say(page, "Queued, then Start over");
    await page.locator(".chat-layout .log .msg.user.queued").waitFor();
    await page.click("button:has-text('Start over')");
    // (A first turn still streaming has nothing to lose yet: no dialog asks.)
    const erase = page.locator("dialog button:has-text('Erase and start over')");
    if (await erase.isVisible()) await erase.click();
    await page.waitForFunction(() => document.querySelector("#chat-input")?.value === "Queued, then Start over", null, { timeout: 10000 });
    assert.equal(await page.locator(".chat-layout .log .msg.user.queued").count(), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a reload while it waits puts it back into the box, never sent and never lost; the answer goes on", async () => {
    const { context, page, errors } = await answering();
    const since = Date.now();
    await say(page, "Held through a reload");
    await page.locator(".chat-layout .log .msg.user.queued", { hasText: "Held through a reload" }).waitFor();
    await page.reload();
    await whenLines(page, LINES);
    await whenIdle(page);
    assert.equal(await page.inputValue("#chat-input"), "Held through a reload", "back in the box");
    assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Held through a reload" }).count(), 0, "not shown as sent");
    assert.equal(stack.fake.requests.filter((r) => r.at >= since).length, 0, "and not sent");
    assert.deepEqual(errors, []);
    await context.close();
  });
});

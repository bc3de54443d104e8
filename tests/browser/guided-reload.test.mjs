// Browser end-to-end tests of a guided chat page reloaded at awkward moments: playwright-core
// drives /usr/bin/chromium against `wrangler dev` with a fake provider that paces its answer. A
// tab reloaded just as its own answer fails gets the message back (and shows another tab's turn
// running by then), and one whose first answer ended before its join shows that answer with its
// chips. While its join is on the way, a reloaded tab shows its answer running (a message typed
// then waits for it; a second reload joins it still); a first answer the server no longer knows
// comes back into the box; one whose join cannot reach the server yet is shown running, with a
// notice, until it can be followed; it shows its answer running before its read of the stored
// conversation answers, so a message typed then waits too; one whose read fails shows its saved copy
// and reads the conversation once the answer ends.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { until } from "../e2e/harness.mjs";
import { stackWithFakeModel } from "./tabs.mjs";
import { answers, guidedPages, LINES, linesOf, REPLY, say, whenIdle, whenLines } from "./guided.mjs";

let stack;
let browser;
const { pacedModel, chatPage, answering } = guidedPages(() => ({ stack, browser }));

before(async () => ({ stack, browser } = await stackWithFakeModel()));
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** `page` has a first answer, then sends `message` and is reloaded while its answer is written,
 * the reloaded page's join of that turn (or, `read`, its read of the stored conversation) held
 * until `release()`: the owner and the turn kept for the reload, with the headers that read its
 * conversation. */
async function reloadedWithJoinHeld(page, message, read = false) {
  await say(page, "Track rivals");
  await whenIdle(page);
  await say(page, message);
  await whenLines(page, 3);
  const [owner, running] = await page.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), JSON.parse(localStorage.getItem("stepwise.chat.running.v1"))]);
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const path = `/api/conversations/${running.conversation_id}${read ? "" : "/stream"}`;
  await page.route((url) => new URL(url).pathname === path, async (route) => (await held, route.continue()), { times: 1 });
  await page.reload();
  return { owner, running, release, headers: { authorization: `Bearer ${owner}`, "x-conversation-token": running.token } };
}

describe("a guided chat page reloaded at awkward moments", () => {
  test("a tab reloaded just as its own answer fails (the turn over before the reload could join it) gets the message back, with the error", async () => {
    const { context, page, errors } = await chatPage();
    stack.fake.script((request) => (JSON.stringify(request.body ?? "").includes("Fails while away") ? { reply: REPLY, paced: true, delayMs: 150, fault: "cut" } : { reply: "Noted.", paced: true, delayMs: 10 }));
    try {
      // The reloaded page's join waits until another client has followed the turn to its error.
      const { running, release, headers } = await reloadedWithJoinHeld(page, "Fails while away");
      assert.ok(running.lease > 0, "the turn's lease is kept with it");
      const followed = await fetch(`${stack.base}/api/conversations/${running.conversation_id}/stream`, { headers });
      assert.match(await followed.text(), /"type":"error"/);
      release();
      await page.waitForFunction(() => document.querySelector("#chat-input")?.value === "Fails while away", null, { timeout: 20000 });
      await page.locator(".chat-layout .error[role=alert]").waitFor({ timeout: 5000 });
      assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Fails while away" }).count(), 0, "nothing of it was kept");
      assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).count(), 1, "the conversation before it shows");
      assert.deepEqual(errors, []);
    } finally {
      pacedModel();
      await context.close();
    }
  });


  test("a tab reloaded while its answer is written shows it running before the stored conversation is read: a message typed then waits, and both come back when the answer fails", async () => {
    const { context, page, errors } = await chatPage();
    stack.fake.script((request) => (JSON.stringify(request.body ?? "").includes("Fails during the read") ? { reply: REPLY, paced: true, delayMs: 150, fault: "cut" } : { reply: "Noted.", paced: true, delayMs: 10 }));
    try {
      const { running, release, headers } = await reloadedWithJoinHeld(page, "Fails during the read", true);
      // The read is held: the turn shows running all the same, and a message typed now waits.
      await page.locator(".chat-layout .log .msg.assistant[aria-busy]").waitFor({ timeout: 10000 });
      await page.locator('[data-action="stop"]').waitFor({ state: "visible", timeout: 5000 });
      await say(page, "Typed during the read");
      await page.locator(".chat-layout .log .msg.user.queued", { hasText: "Typed during the read" }).waitFor({ timeout: 5000 });
      const sent = stack.fake.requests.length;
      // The answer fails (another client follows it to its error); then the read is let through.
      assert.match(await (await fetch(`${stack.base}/api/conversations/${running.conversation_id}/stream`, { headers })).text(), /"type":"error"/);
      release();
      await page.waitForFunction(() => document.querySelector("#chat-input")?.value.includes("Fails during the read") && document.querySelector("#chat-input")?.value.includes("Typed during the read"), null, { timeout: 20000 });
      await page.locator(".chat-layout .error[role=alert]").waitFor({ timeout: 5000 });
      assert.equal(stack.fake.requests.length, sent, "the typed message was not sent");
      assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Fails during the read" }).count(), 0, "nothing of it was kept");
      assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).count(), 1, "the conversation before it shows");
      assert.deepEqual(errors, []);
    } finally {
      pacedModel();
      await context.close();
    }
  });

  test("a tab reloaded while its answer is written, whose read of the stored conversation fails, shows its saved copy and the answer, and reads the conversation once the answer ends", async () => {
    const { context, page, errors } = await chatPage();
    try {
      await say(page, "Track rivals");
      await whenIdle(page);
      await say(page, "Launches");
      await whenLines(page, 3);
      const id = await page.evaluate(() => JSON.parse(localStorage.getItem("stepwise.chat.running.v1")).conversation_id);
      await page.route((url) => new URL(url).pathname === `/api/conversations/${id}`, (route) => route.abort(), { times: 1 });
      await page.reload();
      await page.locator('.chat-layout [role=alert][data-code="not_read"]').waitFor({ timeout: 10000 });
      await page.waitForFunction((n) => (document.querySelector(".chat-layout .log .msg.assistant:last-child")?.textContent ?? "").includes(`Line ${n} `), LINES, { timeout: 30000 });
      await whenIdle(page);
      await page.locator('.chat-layout [role=alert][data-code="not_read"]').waitFor({ state: "detached", timeout: 10000 });
      assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Launches" }).count(), 1);
      assert.equal(linesOf(await answers(page).last().textContent()), LINES);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test("a tab reloaded just as its own answer fails, another tab's message running by the time it joins, gets the message back and shows that other turn", async () => {
    const { context, page, errors } = await chatPage();
    stack.fake.script((request) => (JSON.stringify(request.body ?? "").includes("Fails, then another") ? { reply: REPLY, paced: true, delayMs: 150, fault: "cut" } : JSON.stringify(request.body ?? "").includes("From another tab") ? { reply: REPLY, paced: true, delayMs: 100 } : { reply: "Noted.", paced: true, delayMs: 10 }));
    try {
      const { running, release, headers } = await reloadedWithJoinHeld(page, "Fails, then another");
      // The turn fails; then another tab's message begins its turn, which runs when the page joins.
      assert.match(await (await fetch(`${stack.base}/api/conversations/${running.conversation_id}/stream`, { headers })).text(), /"type":"error"/);
      const { turns } = await (await fetch(`${stack.base}/api/conversations/${running.conversation_id}`, { headers })).json();
      const other = await fetch(`${stack.base}/api/chat`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ conversation_id: running.conversation_id, turns, message: "From another tab" }),
      });
      assert.equal(other.status, 200);
      const reader = other.body.getReader();
      let text = "";
      while ((text.match(/"type":"text_delta"/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
      release();
      await page.waitForFunction(() => document.querySelector("#chat-input")?.value === "Fails, then another", null, { timeout: 20000 });
      await page.locator(".chat-layout .error[role=alert]").waitFor({ timeout: 5000 });
      // The other tab's turn shows here, then its stored answer.
      await page.locator(".chat-layout .log .msg.user", { hasText: "From another tab" }).waitFor({ timeout: 10000 });
      await page.waitForFunction(() => /Line 30/.test([...document.querySelectorAll(".chat-layout .log .msg.assistant")].at(-1)?.textContent ?? ""), null, { timeout: 30000 });
      assert.deepEqual(await page.locator(".chat-layout .log .msg.user").allTextContents(), ["Track rivals", "From another tab"]);
      void reader.cancel();
      assert.deepEqual(errors, []);
    } finally {
      pacedModel();
      await context.close();
    }
  });


  test("a reloaded tab shows its own answer running while its join is on the way: a message typed meanwhile waits for that answer, then is answered", async () => {
    const { context, page, errors } = await chatPage();
    const said = (request) => JSON.stringify(request.body?.messages?.at(-1) ?? "");
    stack.fake.script((request) => (said(request).includes("Held while joined") ? { reply: REPLY, paced: true, delayMs: 60 } : { reply: "Noted.", paced: true, delayMs: 10 }));
    try {
      const { release } = await reloadedWithJoinHeld(page, "Held while joined");
      // Before the join has answered, the turn shows: its message, an answer being written, Stop.
      await page.locator(".chat-layout .log .msg.user", { hasText: "Held while joined" }).waitFor({ timeout: 20000 });
      await page.locator('[data-action="stop"]').waitFor({ state: "visible", timeout: 5000 });
      assert.equal(await page.locator(".chat-layout .log .msg.assistant[aria-busy]").count(), 1);
      const pencils = page.locator(".config dt button");
      assert.ok((await pencils.count()) > 0);
      for (const pencil of await pencils.all()) assert.ok(await pencil.isDisabled(), "a field edit waits for the answer");
      const calls = stack.fake.requests.length;
      await say(page, "Typed while joining");
      await page.locator(".chat-layout .log .msg.user.queued", { hasText: "Typed while joining" }).waitFor({ timeout: 5000 });
      assert.equal(stack.fake.requests.length, calls, "nothing is sent while the answer runs");
      release();
      // The answer goes on to its end; the waiting message is sent then, and answered.
      await until(() => stack.fake.requests.some((r) => said(r).includes("Typed while joining")), 30000);
      await whenIdle(page);
      assert.deepEqual(await page.locator(".chat-layout .log .msg.user").allTextContents(), ["Track rivals", "Held while joined", "Typed while joining"]);
      const shown = await answers(page).allTextContents();
      assert.equal(linesOf(shown.at(-2)), LINES, "the joined answer, whole");
      assert.equal(shown.at(-1), "Noted.");
      for (const pencil of await pencils.all()) assert.ok(!(await pencil.isDisabled()), "and can be made once it has ended");
      assert.equal(stack.fake.requests.filter((r) => said(r).includes("Held while joined")).length, 1, "the reload made no model call");
      assert.deepEqual(errors, []);
    } finally {
      pacedModel();
      await context.close();
    }
  });


  test("a reloaded tab whose first answer its conversation's object no longer knows (the join answers 404) gets the message back, with an error", async () => {
    const { context, page, errors } = await answering(3);
    try {
      await page.route("**/api/conversations/*/stream", (route) => route.fulfill({ status: 404, contentType: "application/json", body: JSON.stringify({ error: { code: "conversation_not_found", message: "gone" } }) }), { times: 1 });
      await page.reload();
      await page.waitForFunction(() => document.querySelector("#chat-input")?.value === "Track rivals", null, { timeout: 20000 });
      assert.match(await page.locator(".chat-layout .error[role=alert]").textContent(), /lost while the page reloaded/);
      assert.equal(await page.locator(".chat-layout .log .msg.user").count(), 0, "nothing of it shows");
      assert.equal(await page.locator('[data-action="stop"]').isVisible(), false);
      assert.equal(await page.locator("#chat-input").isDisabled(), false);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });


  test("a second reload while the first one's join is on the way still joins the turn as the tab's own: the answer goes on, whole", async () => {
    const { context, page, errors } = await answering(3);
    let release;
    const held = new Promise((resolve) => (release = resolve));
    await page.route("**/api/conversations/*/stream", async (route) => (await held, await route.continue().catch(() => {})), { times: 1 });
    await page.reload();
    await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).waitFor({ timeout: 20000 });
    // Left while its join is held: the page going away concludes nothing of it.
    await page.reload();
    release();
    await whenLines(page, LINES);
    await whenIdle(page);
    assert.equal(linesOf(await answers(page).last().textContent()), LINES);
    assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).count(), 1);
    // The tab's own: the conversation is this page's, and its next message is answered in it.
    await say(page, "Launches");
    await page.locator(".chat-layout .log .msg.user", { hasText: "Launches" }).waitFor();
    await whenIdle(page);
    assert.equal(await page.locator(".chat-layout .log .msg.user").count(), 2);
    assert.equal(await page.locator(".chat-layout .error[role=alert]").count(), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });


  test("a reloaded first answer whose join cannot reach the server yet is still shown running, says so, and is followed once the server is reached", async () => {
    const { context, page, errors } = await answering(3);
    // The quick tries (at once, then after 0.25, 1 and 3 s) fail; the next, 5 s on, gets through.
    await page.route("**/api/conversations/*/stream", (route) => route.abort(), { times: 4 });
    await page.reload();
    await page.locator(".chat-layout .error[role=alert]", { hasText: "cannot be reached" }).waitFor({ timeout: 20000 });
    assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).count(), 1, "the turn is still shown");
    assert.ok(await page.locator('[data-action="stop"]').isVisible(), "as running");
    assert.equal(await page.inputValue("#chat-input"), "", "nothing was concluded of it: it is not given back");
    await whenLines(page, LINES);
    await whenIdle(page);
    assert.equal(await page.locator(".chat-layout .error[role=alert]").count(), 0, "the notice goes once the answer is followed");
    assert.equal(await page.locator(".chat-layout .log .msg.user", { hasText: "Track rivals" }).count(), 1);
    assert.equal(linesOf(await answers(page).last().textContent()), LINES);
    assert.deepEqual(errors, []);
    await context.close();
  });


  test("a first answer that ends before the reload can join it shows from the stored conversation, with its chips", async () => {
    const { context, page, errors } = await chatPage();
    const lines = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the answer.`).join("\n");
    stack.fake.script(() => ({ reply: `${lines}\nEXTRACTED_DATA: purpose=Track rivals\nSUGGESTIONS: Spot launches early, Find partners\n`, paced: true, delayMs: 100 }));
    try {
      await say(page, "Track rivals");
      await whenLines(page, 2);
      const [owner, running] = await page.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), JSON.parse(localStorage.getItem("stepwise.chat.running.v1"))]);
      assert.equal(running.lease, 0, "a first turn's lease is kept too");
      let release;
      const held = new Promise((resolve) => (release = resolve));
      await page.route("**/api/conversations/*/stream", async (route) => (await held, route.continue()), { times: 1 });
      await page.reload();
      const headers = { authorization: `Bearer ${owner}`, "x-conversation-token": running.token };
      assert.match(await (await fetch(`${stack.base}/api/conversations/${running.conversation_id}/stream`, { headers })).text(), /"type":"complete"/);
      release();
      await page.locator(".chip >> text=Find partners").waitFor({ timeout: 20000 });
      assert.ok(await page.locator(".chip >> text=Find partners").isEnabled());
      assert.equal(await answers(page).filter({ hasText: "Line 12 of the answer." }).count(), 1, "the answer once");
      assert.equal(await page.inputValue("#chat-input"), "", "nothing given back");
      assert.equal(await page.locator(".chat-layout .error[role=alert]").count(), 0);
      assert.deepEqual(errors, []);
    } finally {
      pacedModel();
      await context.close();
    }
  });
});

// Browser end-to-end test of live turns in the assistant tray: playwright-core drives
// /usr/bin/chromium against `wrangler dev` with a fake provider that paces its answer. Two tabs
// of one owner show the same conversation: a message sent in the first streams in both; the
// first tab is reloaded mid-answer and the answer goes on streaming there, then completes; a
// second long answer is stopped from the other tab and both show it stopped; a message sent while
// an answer streams is queued and answered after it in both tabs, and Stop in the tab whose message
// waits stops that message alone (back into its box); a reload shows the stopped one. In one tab,
// a message sent while its own answer streams is held as queued and sent when the answer ends (a
// reload meanwhile gives it back into the box, unsent). A failed answer gives its message back, and a
// failed first one leaves no conversation behind; History mid-answer leaves that answer running
// off screen, and the conversation shown takes messages at once. A message waiting at the server
// shows above the box in the other tab, and after a reload in its own, whose Stop stops it alone;
// one whose turn is refused its model call (a daily cap reached) goes back into its own tab's box,
// reloaded, and so does one whose answer failed while its tab reloaded, before its live connection
// could replay the turn (also when another tab's waiting message runs by then, or one it sent itself
// before its reload could read the conversation), or after its own
// stream broke; a failed first answer followed after a reload forgets its conversation, also when
// the reloaded tab's socket could not open; an own answer stored before the reloaded tab's socket
// opened shows there, another tab's turn running by then (a failed one's error above that turn);
// another tab's message that waited behind a failed first answer comes back there, its line empty. A turn that began and ended while a tab's
// live connection was down shows there once it is back.
// Screenshot: tests/browser/screenshots/assistant-stopped.png.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { fakeProvider, startStack, until } from "../e2e/harness.mjs";
import { cuttableSocket } from "./tabs.mjs";

const SHOTS = new URL("./screenshots/", import.meta.url).pathname;
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const LINES = 30;
const REPLY = Array.from({ length: LINES }, (_, i) => `Line ${i + 1} of the paced answer.`).join("\n");
let stack;
let browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  stack = await startStack({ providers: (url) => [fakeProvider(url, "fake-openai", "openai")], overrides: { LLM_PROVIDER: "fake-openai" } });
  usualAnswers();
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The text of the last answer in `page`'s tray. */
const lastAnswer = (page) => page.locator(".tray-log .msg.assistant").last();
const linesShown = async (page) => ((await lastAnswer(page).locator(".text").textContent()) ?? "").split("\n").filter(Boolean).length;
const whenLines = (page, n) => page.waitForFunction((n) => (document.querySelector(".tray-log .msg.assistant:last-child .text")?.textContent ?? "").split("\n").filter(Boolean).length >= n, n, { timeout: 20000 });
/** The tray's messages in `page`, for a failure's message: role, state and the text's ends. */
const trayState = (page) => page.evaluate(() => [...document.querySelectorAll(".tray-log > *")].map((m) => {
  const text = (m.querySelector(".text")?.textContent ?? m.textContent ?? "").replace(/\s+/g, " ");
  return `${m.className}${m.hasAttribute("aria-busy") ? " busy" : ""}${m.dataset.status ? ` [${m.dataset.status}]` : ""}: ${text.slice(0, 30)}…${text.slice(-30)}`;
}).join("\n"));
/** `wait()`, with both tabs' trays in the error when it fails. */
const described = async (pages, wait) => {
  try {
    return await wait();
  } catch (error) {
    const states = await Promise.all(pages.map((page, i) => trayState(page).then((s) => `tab ${i + 1}:\n${s}`, () => `tab ${i + 1}: closed`)));
    throw new Error(`${error.message}\n${states.join("\n")}`);
  }
};
/** Waits until `page` shows no answer being written and its last answer whole. */
const whenWhole = (page) => page.waitForFunction(() => document.querySelectorAll(".tray-log .msg.assistant[aria-busy]").length === 0 && /Line 30/.test(document.querySelector(".tray-log .msg.assistant:last-child .text")?.textContent ?? ""), null, { timeout: 30000 });
/** Sends `running` from `first` and, once `second` streams it, `waiting` from `second`, which
 * waits behind it ("Queued"). */
const sendAndQueue = async (first, second, running, waiting) => {
  await first.fill("#assistant-input", running);
  await first.press("#assistant-input", "Enter");
  await second.locator(".tray-log .msg.user", { hasText: running }).waitFor();
  await whenLines(second, 2);
  await second.fill("#assistant-input", waiting);
  await second.press("#assistant-input", "Enter");
  await second.waitForFunction(() => /Queued/.test(document.querySelector(".tray-log .msg.assistant:last-child .typing-text")?.textContent ?? ""), null, { timeout: 10000 });
};
const whenDone = (page) => page.waitForFunction(() => document.querySelector(".tray-log .msg.assistant:last-child")?.getAttribute("aria-busy") === null, null, { timeout: 30000 });
/** The fake provider's usual answers: the paced reply to the assistant, "Other." to the rest. */
const usualAnswers = () => stack.fake.script((request) => (request.system?.includes("Stepwise assistant") ? { reply: REPLY, paced: true, delayMs: 120 } : { reply: "Other." }));
/** The usual answers, but a message holding `text` is answered halfway, then cut (the turn fails). */
const cutAnswerTo = (text) => stack.fake.script((request) => (JSON.stringify(request.body ?? "").includes(text) ? { reply: REPLY, paced: true, delayMs: 150, fault: "cut" } : request.system?.includes("Stepwise assistant") ? { reply: REPLY, paced: true, delayMs: 120 } : { reply: "Other." }));
/** A new page with the tray open and a first answer written there, whole. */
async function warmTray() {
  const opened = await trayOpen();
  await opened.page.fill("#assistant-input", "Warm up");
  await opened.page.press("#assistant-input", "Enter");
  await whenDone(opened.page);
  return opened;
}

/** Another tab of `owner` sends `message` to conversation `id`, where it waits behind the running
 * turn: `begun()` resolves once its turn has begun, `cancel()` drops its stream. */
async function otherTabSends(owner, id, message) {
  const response = await fetch(`${stack.base}/api/assistant`, {
    method: "POST",
    headers: { authorization: `Bearer ${owner}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ provider: "fake-openai", conversation_id: id, message, context: { current_page: "chat" } }),
  });
  assert.ok(response.headers.get("x-stepwise-waiting"), "it waits");
  const reader = response.body.getReader();
  let text = "";
  return {
    begun: async () => {
      while (!/\nid: \d+/.test(`\n${text}`)) text += new TextDecoder().decode((await reader.read()).value);
    },
    cancel: () => void reader.cancel(),
  };
}

/** `page`'s tray sends what its box holds, answered in a new conversation: not `id`, which the
 * failed first turn left not existing (not refused with `conversation_not_found`). */
async function sendsInNewConversation(page, id) {
  usualAnswers();
  const sent = page.waitForResponse((r) => r.url().endsWith("/api/assistant") && r.request().method() === "POST");
  await page.click(".tray-composer button:has-text('Send')");
  assert.equal((await sent).status(), 200, "not refused as a conversation that does not exist");
  await whenWhole(page);
  assert.notEqual(await page.evaluate(() => localStorage.getItem("stepwise.assistant.v1")), id, "a new conversation");
}

/** `page`'s tray sends `message`, whose answer the fake provider cuts, and is reloaded while it is
 * written, its live connection refused until another client has followed the turn to its end:
 * failed, or over already (`over`: the status such a join then gets). The conversation's id. */
async function reloadedAsItFails(page, message, over) {
  cutAnswerTo(message);
  let failed = false;
  await page.routeWebSocket(/\/ws$/, (ws) => (failed ? ws.connectToServer() : ws.close()));
  await page.fill("#assistant-input", message);
  await page.press("#assistant-input", "Enter");
  await whenLines(page, 2);
  const [owner, id] = await page.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), localStorage.getItem("stepwise.assistant.v1")]);
  await page.reload();
  const joined = await fetch(`${stack.base}/api/assistant/conversations/${id}/stream`, { headers: { authorization: `Bearer ${owner}`, accept: "text/event-stream" } });
  const events = await joined.text();
  assert.ok(joined.status === over || /"type":"error"/.test(events), `the turn failed: ${joined.status} ${events.slice(-300)}`);
  failed = true;
  return id;
}

/** A browser context (one owner) whose pages `open()` shows the guided chat (of stack `on`);
 * their page errors. */
async function oneOwner(on = stack) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const errors = [];
  const open = async () => {
    const page = await context.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(on.base + "/#chat");
    return page;
  };
  return { context, errors, open };
}

/** Opens `page`'s tray and has a first answer written there, whole. */
async function warmUp(page) {
  await page.click(".tray-toggle");
  await page.fill("#assistant-input", "Warm up");
  await page.press("#assistant-input", "Enter");
  await whenDone(page);
}

/** A new browser context's page with the tray open (below the header), and the page errors it
 * meets. */
async function trayOpen() {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const errors = [];
  const page = await context.newPage();
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(stack.base + "/#chat");
  await page.click(".tray-toggle");
  // The column starts below the header, not over its lower edge.
  await page.waitForFunction(() => document.querySelector(".tray").getBoundingClientRect().top >= document.querySelector("header.top").getBoundingClientRect().bottom - 0.5, null, { timeout: 5000 });
  return { context, page, errors };
}

describe("live turns in the tray", () => {
  test("Stop from the keyboard leaves the focus in the box; a message sent offline (or refused by the network) fails at once and goes back into the box, and is answered once sent again", async () => {
    const { context, page, errors } = await trayOpen();
    await page.fill("#assistant-input", "A long one, stopped");
    await page.press("#assistant-input", "Enter");
    await page.locator(".tray-log .msg.user", { hasText: "A long one, stopped" }).waitFor();
    await whenLines(page, 2);
    await page.focus(".tray-composer button:has-text('Stop')");
    await page.keyboard.press("Enter");
    await page.waitForSelector(".tray-log .msg.assistant:last-child[data-status=stopped]", { timeout: 20000 });
    await page.waitForFunction(() => document.activeElement?.id === "assistant-input", null, { timeout: 5000 });
    await context.setOffline(true);
    const since = Date.now();
    await page.keyboard.type("Sent offline");
    await page.keyboard.press("Enter");
    await page.locator(".tray-log .msg.assistant:last-child [data-code=network_error]").waitFor({ timeout: 5000 });
    assert.equal(await page.inputValue("#assistant-input"), "Sent offline", "the message is back in the box");
    assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Sent offline" }).count(), 0, "and out of the log: it was not sent");
    assert.equal(stack.fake.requests.filter((r) => r.at >= since).length, 0, "nothing reached the provider");
    assert.ok(await page.locator(".tray-composer button[type=submit]").isEnabled(), "it can be sent again");
    await context.setOffline(false);
    await page.press("#assistant-input", "Enter");
    await page.locator(".tray-log .msg.user", { hasText: "Sent offline" }).waitFor();
    await described([page], () => whenWhole(page));
    // Online, a request the network refuses (here, aborted by the page's route) fails the same way.
    await page.route("**/api/assistant", (route) => route.abort("connectionrefused"));
    await page.fill("#assistant-input", "Refused by the network");
    await page.press("#assistant-input", "Enter");
    await page.locator(".tray-log .msg.assistant:last-child [data-code=network_error]").waitFor({ timeout: 5000 });
    assert.equal(await page.inputValue("#assistant-input"), "Refused by the network", "back in the box");
    assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Refused by the network" }).count(), 0, "and out of the log");
    await page.unroute("**/api/assistant");
    await page.press("#assistant-input", "Enter");
    await page.locator(".tray-log .msg.user", { hasText: "Refused by the network" }).waitFor();
    await described([page], () => whenWhole(page));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a message sent while the tab's own answer streams is queued, then answered after it; a reload while it waits gives it back unsent", async () => {
    const { context, page, errors } = await trayOpen();
    const sent = (text) => stack.fake.requests.filter((r) => JSON.stringify(r.body ?? "").includes(text)).length;
    const send = async (text) => (await page.fill("#assistant-input", text), await page.press("#assistant-input", "Enter"));
    await send("The first of two");
    await page.locator(".tray-log .msg.user", { hasText: "The first of two" }).waitFor();
    await whenLines(page, 2);
    await send("The second, queued");
    await page.locator(".tray-log .msg.user.queued", { hasText: "The second, queued" }).waitFor({ timeout: 5000 });
    assert.equal(await page.inputValue("#assistant-input"), "", "the box is cleared");
    assert.ok(await page.locator(".tray-composer button[type=submit]").isDisabled(), "one message waits at a time");
    await send("A third, kept in the box");
    assert.equal(await page.inputValue("#assistant-input"), "A third, kept in the box");
    assert.equal(sent("The second, queued"), 0, "nothing is sent while the answer streams");
    await page.locator(".tray-log .msg.user:not(.queued)", { hasText: "The second, queued" }).waitFor({ timeout: 30000 });
    await described([page], () => whenWhole(page));
    assert.deepEqual(await page.locator(".tray-log > .msg").evaluateAll((all) => all.map((m) => m.classList.contains("user") ? m.textContent : "answer")),
      ["The first of two", "answer", "The second, queued", "answer"], await trayState(page));
    assert.equal(sent("The second, queued"), 1, "sent once, after the answer it waited for");
    assert.equal(await page.inputValue("#assistant-input"), "A third, kept in the box");

    await send("A long one, then a reload");
    await page.locator(".tray-log .msg.user", { hasText: "A long one, then a reload" }).waitFor();
    await whenLines(page, 2);
    await send("Held across the reload");
    await page.locator(".tray-log .msg.user.queued").waitFor({ timeout: 5000 });
    await page.reload();
    await page.waitForFunction(() => document.querySelector("#assistant-input")?.value === "Held across the reload", null, { timeout: 10000 });
    await described([page], () => whenWhole(page));
    assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Held across the reload" }).count(), 0, "not sent from the reloaded tab");
    assert.equal(sent("Held across the reload"), 0);

    // New while the answer streams gives the queued message back; sent again, it starts the new
    // conversation once that answer ends (the old answer, off screen, does not take the tray back).
    await send("A long one, then New");
    await page.locator(".tray-log .msg.user", { hasText: "A long one, then New" }).waitFor();
    await whenLines(page, 2);
    await send("Queued, then New");
    await page.locator(".tray-log .msg.user.queued").waitFor({ timeout: 5000 });
    await page.click(".tray-head button:has-text('New')", { timeout: 5000 });
    assert.equal(await page.inputValue("#assistant-input"), "Queued, then New", "back in the box");
    assert.ok(await page.locator(".tray-composer button[type=submit]").isEnabled(), "and it can be sent");
    await page.press("#assistant-input", "Enter");
    await page.locator(".tray-log .msg.user:not(.queued)", { hasText: "Queued, then New" }).waitFor({ timeout: 30000 });
    await described([page], () => whenWhole(page));
    await page.reload();
    await page.locator(".tray-log .msg.assistant").first().waitFor();
    assert.deepEqual(await page.locator(".tray-log .msg.user").allInnerTexts(), ["Queued, then New"], await trayState(page));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a failed answer gives its message back (a failed first one leaves no conversation); History mid-answer leaves that answer to run off screen", async () => {
    const { context, page, errors } = await trayOpen();
    const usual = { reply: REPLY, paced: true, delayMs: 120 };
    stack.fake.script((request) => (JSON.stringify(request.body).includes("Fail this first") ? { reply: "Partial", fault: "cut" } : request.system?.includes("Stepwise assistant") ? usual : { reply: "Other." }));
    try {
      const send = async (text) => (await page.fill("#assistant-input", text), await page.press("#assistant-input", "Enter"));
      await send("Fail this first");
      await page.locator(".tray-log .msg.assistant:last-child [data-code]").waitFor({ timeout: 20000 });
      assert.equal(await page.inputValue("#assistant-input"), "Fail this first", "the message is back in the box");
      assert.equal(await page.evaluate(() => localStorage.getItem("stepwise.assistant.v1")), null, "no conversation kept");
      await send("A fresh start");
      await page.locator(".tray-log .msg.user", { hasText: "A fresh start" }).waitFor();
      await described([page], () => whenWhole(page));

      await page.click(".tray-head button:has-text('New')");
      await send("Long, then History");
      await page.locator(".tray-log .msg.user", { hasText: "Long, then History" }).waitFor();
      await whenLines(page, 2);
      await page.click(".tray-head button:has-text('History')");
      await page.click(".tray-history button:has-text('A fresh start')");
      await page.locator(".tray-log .msg.user", { hasText: "A fresh start" }).waitFor();
      await page.waitForTimeout(500);
      assert.ok(await page.locator(".tray-composer button:has-text('Stop')").isHidden(), "nothing runs in this conversation");
      const since = Date.now();
      await send("Sent at once");
      await page.locator(".tray-log .msg.user:not(.queued)", { hasText: "Sent at once" }).waitFor({ timeout: 5000 });
      await page.waitForFunction(() => document.querySelectorAll(".tray-log .msg.assistant").length > 0 && !document.querySelector(".tray-log .queued"), null, { timeout: 5000 });
      await described([page], () => whenWhole(page));
      assert.ok(stack.fake.requests.some((r) => r.at >= since && JSON.stringify(r.body).includes("Sent at once")), "sent while the other answer ran off screen");
      await page.reload();
      await page.locator(".tray-log .msg.assistant").first().waitFor();
      assert.deepEqual(await page.locator(".tray-log .msg.user").allInnerTexts(), ["A fresh start", "Sent at once"], await trayState(page));
      assert.deepEqual(errors, []);
    } finally {
      stack.fake.script((request) => (request.system?.includes("Stepwise assistant") ? usual : { reply: "Other." }));
      await context.close();
    }
  });

  test("two tabs stream one turn; a reload mid-answer goes on streaming; Stop from the other tab stops it in both", async () => {
    const { context, errors, open } = await oneOwner();
    let first = await open();
    await warmUp(first);
    // The second tab opens the same conversation (the tray resumes the last one).
    const second = await open();
    await second.locator(".tray-log .msg.assistant").first().waitFor();

    await first.fill("#assistant-input", "Tell me everything");
    await first.press("#assistant-input", "Enter");
    // (Each wait for lines follows the wait for the turn's message: until then the last answer
    // is the one before, whole.)
    await second.locator(".tray-log .msg.user", { hasText: "Tell me everything" }).waitFor();
    await whenLines(second, 3);
    assert.ok(await second.locator(".tray-composer button:has-text('Stop')").isVisible(), "Stop shows while another tab's turn runs");
    assert.ok(await second.locator(".tray-composer button[type=submit]").isEnabled(), "a message may be sent meanwhile (it waits)");

    await whenLines(first, 4);
    await first.reload();
    await whenLines(first, LINES - 5);
    await whenDone(first);
    await whenDone(second);
    for (const page of [first, second]) {
      assert.equal(await linesShown(page), LINES, "the whole answer, once");
      assert.equal((await lastAnswer(page).locator(".text").textContent()).trim(), REPLY);
    }

    await second.fill("#assistant-input", "Another long one");
    await second.press("#assistant-input", "Enter");
    await first.locator(".tray-log .msg.user", { hasText: "Another long one" }).waitFor();
    await whenLines(first, 3);
    await first.click(".tray-composer button:has-text('Stop')");
    for (const page of [first, second]) {
      await page.waitForSelector(".tray-log .msg.assistant:last-child[data-status=stopped]", { timeout: 20000 });
      assert.ok((await linesShown(page)) < LINES, "the answer was cut short");
      assert.ok(await page.locator(".tray-composer button[type=submit]").isEnabled(), "a new message can be sent");
    }
    await second.screenshot({ path: `${SHOTS}assistant-stopped.png` });

    // A message sent from the second tab while the first tab's answer streams waits, then is
    // answered right after it, in both tabs.
    await sendAndQueue(first, second, "Once more, in full", "And a follow-up");
    for (const page of [first, second]) {
      await page.locator(".tray-log .msg.user", { hasText: "And a follow-up" }).waitFor({ timeout: 30000 });
      await described([first, second], () => whenWhole(page));
      const users = await page.locator(".tray-log .msg.user").allInnerTexts();
      assert.deepEqual(users.slice(-2), ["Once more, in full", "And a follow-up"], `tab ${page === first ? 1 : 2}:\n${await trayState(page)}`);
    }

    // Stop in the tab whose message waits stops that message alone: it goes back into its box,
    // and the answer it waited for goes on to its end in both tabs.
    await sendAndQueue(first, second, "A last long one", "Never mind this");
    await second.click(".tray-composer button:has-text('Stop')");
    await described([first, second], () => second.waitForFunction(() => document.querySelector("#assistant-input").value === "Never mind this" && ![...document.querySelectorAll(".tray-log .msg.user")].some((m) => m.textContent === "Never mind this"), null, { timeout: 10000 }));
    for (const page of [first, second]) {
      await described([first, second], () => whenWhole(page));
      assert.equal(await lastAnswer(page).getAttribute("data-status"), null, "the answer it waited for was not stopped");
      assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Never mind this" }).count(), 0);
    }
    await first.close();
    first = await open();
    await first.waitForSelector(".tray-log .msg.assistant[data-status=stopped]", { timeout: 20000 });
    assert.match(await first.locator(".tray-log .msg.assistant[data-status=stopped]").innerText(), /Stopped\./);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a tab reloaded while its own answer is written follows it; if that answer then fails, the message goes back into its box", async () => {
    const { context, page, errors } = await warmTray();
    cutAnswerTo("Cut short later");
    try {
      await page.fill("#assistant-input", "Cut short later");
      await page.press("#assistant-input", "Enter");
      await whenLines(page, 2);
      await page.reload();
      await page.locator(".tray-log .msg.user", { hasText: "Cut short later" }).waitFor({ timeout: 10000 });
      await described([page], () => page.waitForFunction(() => document.querySelector("#assistant-input").value === "Cut short later", null, { timeout: 30000 }));
      await page.locator(".tray-log .msg.assistant:last-child .error").waitFor({ timeout: 5000 });
      assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Cut short later" }).count(), 0, "out of the log: nothing of it was kept");
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  test("a tab reloaded just as its own answer fails (before its live connection could replay the turn) gets the message back, with the error", async () => {
    const { context, page, errors } = await warmTray();
    try {
      // Another client follows the turn to its end: it failed (or had ended already: 204).
      await reloadedAsItFails(page, "Fails while away", 204);
      await described([page], () => page.waitForFunction(() => document.querySelector("#assistant-input").value === "Fails while away", null, { timeout: 20000 }));
      await page.locator(".tray-log .msg.assistant:last-child .error").waitFor({ timeout: 5000 });
      assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Fails while away" }).count(), 0, "nothing of it was kept");
      assert.equal(await page.evaluate(() => Object.keys(sessionStorage).filter((key) => key.startsWith("stepwise.tray.reading")).length), 0, "the turn kept for the reload is forgotten");
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  for (const refused of [false, true]) test(`a tab reloaded while its own answer is written, a message sent there before the conversation could be read, still gets the first message back when that answer fails${refused ? ", its error kept when the live connection opens late" : ""}`, async () => {
    const { context, page, errors } = await warmTray();
    cutAnswerTo("Fails during the read");
    let open = !refused;
    if (refused) await page.routeWebSocket(/\/ws$/, (ws) => (open ? ws.connectToServer() : ws.close()));
    try {
      await page.fill("#assistant-input", "Fails during the read");
      await page.press("#assistant-input", "Enter");
      await whenLines(page, 2);
      const [owner, id] = await page.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), localStorage.getItem("stepwise.assistant.v1")]);
      // The reloaded tab's read of the conversation waits until the answer has failed; a message
      // is sent meanwhile (it waits at the server behind the failing turn).
      let release;
      const held = new Promise((resolve) => (release = resolve));
      await page.route((url) => new URL(url).pathname === `/api/assistant/conversations/${id}`, async (route) => (await held, await route.continue().catch(() => {})), { times: 1 });
      await page.reload();
      await page.fill("#assistant-input", "Sent during the read");
      await page.press("#assistant-input", "Enter");
      await until(async () => !(await (await fetch(`${stack.base}/api/assistant/conversations/${id}`, { headers: { authorization: `Bearer ${owner}` } })).json()).running, 20000);
      release();
      await described([page], () => page.waitForFunction(() => document.querySelector("#assistant-input").value.includes("Fails during the read"), null, { timeout: 20000 }));
      await described([page], () => page.locator(".tray-log .msg.assistant .error").first().waitFor({ timeout: 5000 }));
      assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Fails during the read" }).count(), 0, "nothing of it was kept");
      await page.locator(".tray-log .msg.user", { hasText: "Sent during the read" }).waitFor({ timeout: 10000 });
      // The live connection opens: the conversation is read again, the error kept below it.
      if (refused) (open = true), await page.waitForResponse((r) => r.url().includes(`/api/assistant/conversations/${id}?`), { timeout: 20000 });
      await described([page], () => page.locator(".tray-log .msg.assistant .error").first().waitFor({ timeout: 5000 }));
      assert.equal(await page.evaluate(() => Object.keys(sessionStorage).filter((key) => key.startsWith("stepwise.tray.reading")).length), 0, "no turn is kept for a reload any more");
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  test("a tab reloaded just as its own answer fails, another tab's message having waited behind it and running now, still gets its message back", async () => {
    const { context, page, errors } = await warmTray();
    cutAnswerTo("Fails, then the other runs");
    let failed = false;
    await page.routeWebSocket(/\/ws$/, (ws) => (failed ? ws.connectToServer() : ws.close()));
    try {
      await page.fill("#assistant-input", "Fails, then the other runs");
      await page.press("#assistant-input", "Enter");
      await whenLines(page, 2);
      const [owner, id] = await page.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), localStorage.getItem("stepwise.assistant.v1")]);
      // Another tab's message waits at the server behind this turn, and runs once it fails.
      const other = await otherTabSends(owner, id, "Sent from another tab");
      await page.reload();
      await other.begun();
      failed = true;
      await described([page], () => page.waitForFunction(() => document.querySelector("#assistant-input").value === "Fails, then the other runs", null, { timeout: 20000 }));
      await page.locator(".tray-log .msg.assistant .error").first().waitFor({ timeout: 5000 });
      assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Fails, then the other runs" }).count(), 0, "nothing of it was kept");
      // The other tab's turn streams here all the same, below the error, and ends whole.
      await page.locator(".tray-log .msg.user", { hasText: "Sent from another tab" }).waitFor({ timeout: 10000 });
      const [error, later] = await page.evaluate(() => ((nodes) => [nodes.findIndex((n) => n.querySelector(".error")), nodes.findIndex((n) => n.textContent === "Sent from another tab")])([...document.querySelectorAll(".tray-log > *")]));
      assert.ok(error >= 0 && error < later, `the error above the later turn (${error}, ${later})`);
      await described([page], () => page.waitForFunction(() => [...document.querySelectorAll(".tray-log .msg.assistant .text")].some((t) => /Line 30/.test(t.textContent)), null, { timeout: 30000 }));
      other.cancel();
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  test("a tab reloaded while its own answer is written, answered before its live connection opens while another tab's message runs, shows that answer", async () => {
    const { context, page, errors } = await warmTray();
    let answered;
    const opened = new Promise((resolve) => (answered = resolve));
    await page.routeWebSocket(/\/ws$/, async (ws) => (await opened, ws.connectToServer()));
    try {
      await page.fill("#assistant-input", "Own, answered unseen");
      await page.press("#assistant-input", "Enter");
      await whenLines(page, 2);
      const [owner, id] = await page.evaluate(() => [localStorage.getItem("stepwise.owner.v1"), localStorage.getItem("stepwise.assistant.v1")]);
      const other = await otherTabSends(owner, id, "Sent from another tab");
      await page.reload();
      // The live connection opens (at its first try) once the page's own answer is stored and the other runs.
      await other.begun();
      answered();
      await described([page], () => page.waitForFunction(() => {
        const users = [...document.querySelectorAll(".tray-log .msg.user")].map((m) => m.textContent);
        return users.includes("Own, answered unseen") && users.includes("Sent from another tab");
      }, null, { timeout: 20000 }));
      await described([page], () => page.waitForFunction(() => [...document.querySelectorAll(".tray-log .msg.assistant .text")].filter((t) => /Line 30/.test(t.textContent)).length >= 3, null, { timeout: 30000 }));
      assert.equal(await page.inputValue("#assistant-input"), "", "nothing given back");
      assert.equal(await page.locator(".tray-log .msg.assistant .error").count(), 0);
      const users = await page.locator(".tray-log .msg.user").allTextContents();
      assert.deepEqual(users, ["Warm up", "Own, answered unseen", "Sent from another tab"], "each once, in order");
      other.cancel();
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test("a tab reloaded while its first answer is written, which then fails, gets the message back and forgets the conversation it would have begun: the next message begins a new one", async () => {
    const { context, page, errors } = await trayOpen();
    cutAnswerTo("A first answer that fails");
    try {
      await page.fill("#assistant-input", "A first answer that fails");
      await page.press("#assistant-input", "Enter");
      await whenLines(page, 2);
      const id = await page.evaluate(() => localStorage.getItem("stepwise.assistant.v1"));
      assert.match(id ?? "", /^[0-9a-f]{32}$/);
      await page.reload();
      await described([page], () => page.waitForFunction(() => document.querySelector("#assistant-input")?.value === "A first answer that fails", null, { timeout: 30000 }));
      await page.waitForFunction(() => localStorage.getItem("stepwise.assistant.v1") === null, null, { timeout: 5000 });
      await sendsInNewConversation(page, id);
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  test("a first answer that fails while its tab reloads, its live connection not yet open, gives the message back too: the conversation it would have begun is forgotten", async () => {
    const { context, page, errors } = await trayOpen();
    try {
      // Another client follows the turn to its error; the conversation it began is then gone (404).
      const id = await reloadedAsItFails(page, "A first one, failed unseen", 404);
      await described([page], () => page.waitForFunction(() => document.querySelector("#assistant-input")?.value === "A first one, failed unseen", null, { timeout: 20000 }));
      await page.waitForFunction(() => localStorage.getItem("stepwise.assistant.v1") === null, null, { timeout: 5000 });
      await page.locator(".tray-log .msg.assistant .error").first().waitFor({ timeout: 5000 });
      await sendsInNewConversation(page, id);
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  test("a message another tab sent while a first answer ran, which then failed, comes back there, its waiting line empty; its next message begins a new conversation", async () => {
    const { context, errors, open } = await oneOwner();
    cutAnswerTo("A first answer, cut");
    try {
      const first = await open();
      await first.click(".tray-toggle");
      await first.fill("#assistant-input", "A first answer, cut");
      await first.press("#assistant-input", "Enter");
      await whenLines(first, 2);
      const id = await first.evaluate(() => localStorage.getItem("stepwise.assistant.v1"));
      const second = await open();
      await second.locator(".tray-log .msg.user", { hasText: "A first answer, cut" }).waitFor({ timeout: 10000 });
      await second.fill("#assistant-input", "Sent while it ran");
      await second.press("#assistant-input", "Enter");
      await second.waitForFunction(() => /Queued/.test(document.querySelector(".tray-log .msg.assistant:last-child")?.textContent ?? ""), null, { timeout: 10000 });
      await described([first, second], () => second.waitForFunction(() => document.querySelector("#assistant-input")?.value === "Sent while it ran", null, { timeout: 30000 }));
      await second.waitForFunction(() => document.querySelector(".waiting-line")?.hidden !== false, null, { timeout: 5000 });
      await sendsInNewConversation(second, id);
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  test("an answer whose stream broke goes on over the live connection; if it then fails, its message goes back into the box and leaves the log", async () => {
    const { context, page, errors } = await warmTray();
    cutAnswerTo("Broken, then failed");
    // The page's stream of its turn breaks after its first events (the turn runs on).
    await page.route("**/api/assistant", async (route) => {
      const request = route.request();
      const response = await fetch(request.url(), { method: "POST", headers: request.headers(), body: request.postData() });
      const reader = response.body.getReader();
      let text = "";
      while ((text.match(/\n\n/g) ?? []).length < 4) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      void reader.cancel();
      await route.fulfill({ status: response.status, headers: Object.fromEntries(response.headers), body: text.slice(0, text.lastIndexOf("\n\n") + 2) });
    }, { times: 1 });
    try {
      await page.fill("#assistant-input", "Broken, then failed");
      await page.press("#assistant-input", "Enter");
      await described([page], () => page.waitForFunction(() => document.querySelector("#assistant-input").value === "Broken, then failed", null, { timeout: 30000 }));
      await page.locator(".tray-log .msg.assistant:last-child .error").waitFor({ timeout: 5000 });
      assert.equal(await page.locator(".tray-log .msg.user", { hasText: "Broken, then failed" }).count(), 0, "nothing of it was kept");
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  test("a turn that begins and ends while a tab's live connection is down shows there once the connection is back", async () => {
    const { context, errors, open } = await oneOwner();
    const first = await open();
    const socket = await cuttableSocket(first);
    await warmUp(first);
    const second = await open();
    await second.locator(".tray-log .msg.assistant").first().waitFor();
    await first.waitForTimeout(500); // its socket is open
    stack.fake.script((request) => (request.system?.includes("Stepwise assistant") ? { reply: "Answered while the first tab was away." } : { reply: "Other." }));
    try {
      await socket.cut();
      await second.fill("#assistant-input", "Sent while the first tab was away");
      await second.press("#assistant-input", "Enter");
      await second.locator(".tray-log .msg.assistant", { hasText: "Answered while the first tab was away." }).waitFor({ timeout: 20000 });
      await whenDone(second);
      assert.equal(await first.locator(".tray-log .msg.user", { hasText: "Sent while the first tab was away" }).count(), 0, "not seen while the socket was down");
      socket.restore();
      await described([first, second], () => first.locator(".tray-log .msg.assistant", { hasText: "Answered while the first tab was away." }).waitFor({ timeout: 30000 }));
      assert.equal(await first.locator(".tray-log .msg.user", { hasText: "Sent while the first tab was away" }).count(), 1);
      assert.deepEqual(errors, []);
    } finally {
      usualAnswers();
      await context.close();
    }
  });

  test("a message waiting at the server shows above the box in the other tab, and in its own tab after a reload, where its Stop withdraws it alone", async () => {
    const { context, errors, open } = await oneOwner();
    const first = await open();
    await warmUp(first);
    const second = await open();
    await second.locator(".tray-log .msg.assistant").first().waitFor();
    const lined = (page) => page.locator(".waiting-line .waiting-item", { hasText: "Wait for me" });

    await sendAndQueue(first, second, "A long answer to wait for", "Wait for me");
    await described([first, second], () => lined(first).waitFor({ timeout: 10000 }));
    assert.match(await lined(first).innerText(), /sent in another tab/);
    assert.equal(await lined(first).locator("button").count(), 0, "another tab's message is withdrawn in its own tab");
    await second.waitForTimeout(500); // its line came to both tabs at once
    assert.equal(await lined(second).count(), 0, "the tab whose stream waits shows it in its log, not twice");
    // Reloaded, the tab that sent it shows it waiting, with a Stop of its own.
    await second.reload();
    await described([first, second], () => lined(second).waitFor({ timeout: 10000 }));
    assert.equal(await second.locator(".tray-log .msg.user", { hasText: "Wait for me" }).count(), 0, "not in the log: it was not answered yet");
    // The first Stop reaches the server but its answer is lost: the withdrawal, sent again,
    // answers the same.
    let lost = 0;
    await second.route("**/stop", async (route) => {
      if (lost++ > 0) return route.continue();
      await route.fetch();
      await route.abort("connectionreset");
    });
    await lined(second).locator("button", { hasText: "Stop" }).click();
    await second.waitForFunction(() => document.querySelector("#assistant-input").value === "Wait for me", null, { timeout: 10000 });
    assert.equal(lost, 2, "sent again once");
    assert.ok(await second.locator(".waiting-line .error").isHidden(), "nothing to explain: it was withdrawn");
    assert.equal(await second.evaluate(() => document.activeElement?.id), "assistant-input", "the box, where the message went, has the focus");
    for (const page of [first, second]) await described([first, second], () => page.waitForSelector(".waiting-line", { state: "hidden", timeout: 10000 }));
    // The answer it waited for was not stopped, and nothing of the message was stored.
    await described([first, second], () => whenWhole(first));
    assert.equal(await lastAnswer(first).getAttribute("data-status"), null);
    await second.reload();
    await whenWhole(second);
    assert.equal(await second.locator(".tray-log .msg.user", { hasText: "Wait for me" }).count(), 0);
    assert.equal(await second.inputValue("#assistant-input"), "Wait for me", "the message given back is still in the box after a reload");
    assert.ok(await second.locator(".waiting-line").isHidden());
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe("a waiting message whose turn fails", () => {
  let capped;
  before(async () => {
    // Two model calls a day for each owner: the warm-up, and the answer the message waits for.
    capped = await startStack({ providers: (url) => [fakeProvider(url, "fake-openai", "openai")], overrides: { LLM_PROVIDER: "fake-openai", MODEL_CALLS_PER_OWNER_PER_DAY: "2" } });
    capped.fake.script((request) => (request.system?.includes("Stepwise assistant") ? { reply: REPLY, paced: true, delayMs: 120 } : { reply: "Other." }));
  });
  after(() => capped?.stop());

  test("its turn refused its model call (a daily cap reached): the message goes back into the box of the tab that sent it, after a reload too, and the error shows", async () => {
    const { context, errors, open } = await oneOwner(capped);
    const first = await open();
    await warmUp(first);
    const second = await open();
    await second.locator(".tray-log .msg.assistant").first().waitFor();
    const lined = (page) => page.locator(".waiting-line .waiting-item", { hasText: "Over the cap" });
    await sendAndQueue(first, second, "A long answer to wait for", "Over the cap");
    await second.reload();
    await described([first, second], () => lined(second).waitFor({ timeout: 10000 }));
    await described([first, second], () => second.waitForFunction(() => document.querySelector("#assistant-input").value === "Over the cap", null, { timeout: 40000 }));
    await second.locator(".tray-log .msg.assistant:last-child [data-code=quota_exceeded]").waitFor({ timeout: 5000 });
    assert.equal(await second.locator(".tray-log .msg.user", { hasText: "Over the cap" }).count(), 0, "out of the log: nothing of it was kept");
    await first.locator(".tray-log .msg.assistant:last-child [data-code=quota_exceeded]").waitFor({ timeout: 5000 });
    assert.equal(await first.inputValue("#assistant-input"), "", "nothing goes into the other tab's box");
    assert.equal(await first.locator(".tray-log .msg.user", { hasText: "Over the cap" }).count(), 0, "nor is it in the other tab's log");
    assert.ok(await second.locator(".waiting-line").isHidden());
    assert.deepEqual(errors, []);
    await context.close();
  });
});

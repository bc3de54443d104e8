// Browser end-to-end test of the tray's cards when two tabs race or the model fails after them:
// playwright-core drives /usr/bin/chromium against `wrangler dev` with a fake provider speaking
// OpenAI's wire. An approval approved in two tabs at once runs once, and both tabs show its answer
// whole (the tab that lost says it was decided already); an approved call whose answer then fails
// shows the card approved and the failure in the log, as every tab does; a note supplied to a
// context request whose answer then fails can be answered again from the card, in both tabs. An
// answer asked on a stream's Articles tab streams in a tab on another page with its card's marker
// line hidden, as in the tab that asked.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { savedStream } from "../e2e/fixtures.mjs";
import { apiCaller, fakeProvider, newOwner, startStack } from "../e2e/harness.mjs";
import { CHROMIUM_ARGS, ownerTab } from "./tabs.mjs";

let stack;
let browser;
const call = apiCaller(() => stack.base);
/** How many of the next model calls fail (500): after a tool ran, or for a resumed note. */
const fail = { afterTool: 0, resumed: 0 };

/** The assistant's model: asks to start research (an approval) for "RESEARCH", answers a resumed
 * note with what it was given, and fails as `fail` says. */
function model(request) {
  const messages = request.body?.messages ?? [];
  const last = messages.at(-1);
  const asked = JSON.stringify(messages.findLast((m) => m.role === "user")?.content ?? "");
  if (last?.role === "tool") return fail.afterTool > 0 ? (fail.afterTool--, { status: 500 }) : { reply: "Done: it ran." };
  if (asked.includes("RESEARCH") && JSON.stringify(request.body).includes('"start_research"')) {
    return { reply: "I will do that once you approve.", toolCalls: [{ name: "start_research", arguments: { prompt: "EGFR resistance", providers: ["fake-openai"], synthesis_provider: "fake-openai" } }] };
  }
  if (/my notes/i.test(asked)) {
    if (fail.resumed > 0) return (fail.resumed--, { status: 500 });
    return { reply: `Compared with: ${request.system?.match(/supplied by the user\)\n([^\n]*)/)?.[1] ?? "nothing"}.` };
  }
  if (asked.includes("SHARPER")) return { reply: SHARPER, paced: true, delayMs: 120 };
  return { reply: "A report on the question." };
}

/** An answer with a query card (a marker the Articles tab parses) between two lines of text. */
const SHARPER = 'Here is a sharper query:\nQUERY_SUGGESTION: {"query": "EGFR[MeSH] AND resistance[Title/Abstract]", "explanation": "MeSH for EGFR"}\nIt narrows the results a lot.\n';

before(async () => {
  // The offline provider too, for the guided turns that save a stream.
  stack = await startStack({ providers: (url) => [fakeProvider(url, "fake-openai", "openai"), { name: "offline", kind: "offline" }], overrides: { LLM_PROVIDER: "fake-openai" } });
  stack.fake.script(model);
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const card = (page) => page.locator(".tray-log .approval-card").last();
const answers = (page) => page.locator(".tray-log .msg.assistant");

/** Two tabs of `owner` at `path` (the second at `otherPath`), the second showing the conversation
 * the first asks `message` in, once `ready` shows in both. */
async function twoTabs(path, message, ready, otherPath = path, owner = newOwner()) {
  const { page, context, errors } = await ownerTab(browser, stack.base, owner, path);
  await page.fill("#assistant-input", message);
  await page.press("#assistant-input", "Enter");
  await ready(page).waitFor({ timeout: 20000 });
  const other = await context.newPage();
  other.on("pageerror", (error) => errors.push(error.message));
  await other.goto(stack.base + otherPath);
  if ((await other.getAttribute(".tray-toggle", "aria-expanded")) !== "true") await other.click(".tray-toggle");
  await ready(other).waitFor({ timeout: 20000 });
  await other.waitForTimeout(500); // its live connection is open
  return { owner, page, other, context, errors };
}

describe("tray cards when tabs race or the model fails after them", () => {
  test("approved in two tabs at once: it runs once, and both tabs show its answer whole", async () => {
    const pending = (page) => card(page).locator("[data-decision=approve]");
    const { owner, page, other, context, errors } = await twoTabs("/#research", "RESEARCH please start research", pending);
    await Promise.all([pending(page).click(), pending(other).click()]);
    for (const tab of [page, other]) {
      await answers(tab).filter({ hasText: "Done: it ran." }).waitFor({ timeout: 20000 });
      await tab.waitForFunction(() => !document.querySelector(".tray-log .msg.assistant[aria-busy]"), null, { timeout: 20000 });
      assert.equal(await tab.locator(".tray-log .msg.user.action", { hasText: "Approved" }).count(), 1, "the approval shows once");
      assert.equal(await tab.locator(".tray-log .msg.assistant [data-code]").count(), 0, "no failed answer is left in the log");
    }
    const outcomes = await Promise.all([page, other].map((tab) => card(tab).innerText()));
    assert.ok(outcomes.some((text) => /decided already/.test(text)), "the tab that lost says so on its card");
    const { items } = (await call("GET", "/api/research?limit=5", { owner })).json;
    assert.equal(items.length, 1, "one job");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("an approved call whose answer then fails: the card stays approved and the log shows the failure, in both tabs", async () => {
    const pending = (page) => card(page).locator("[data-decision=approve]");
    const { owner, page, other, context, errors } = await twoTabs("/#research", "RESEARCH please start research", pending);
    fail.afterTool = 1;
    await pending(page).click();
    for (const tab of [page, other]) {
      await tab.locator(".tray-log .msg.assistant [data-code=upstream_error]").waitFor({ timeout: 20000 });
      await card(tab).locator(".approval-result").waitFor({ timeout: 20000 });
      assert.doesNotMatch(await card(tab).innerText(), /refused/, "the approval was not refused: it ran");
      assert.equal(await tab.locator(".tray-log .msg.user.action", { hasText: "Approved" }).count(), 1);
    }
    assert.equal((await call("GET", "/api/research?limit=5", { owner })).json.items.length, 1, "the approved call ran");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a note whose answer fails can be answered again from the card, in either tab", async () => {
    const note = (page) => page.locator('.tray-log .request-card [data-action="attach-note"]').last();
    const { page, other, context, errors } = await twoTabs("/#chat", "Compare this with my notes", note);
    fail.resumed = 1;
    await page.locator(".tray-log .request-card textarea").last().fill("Dose escalation first.");
    await note(page).click();
    await page.locator(".tray-log .request-card .request-status", { hasText: "Delivered, but the answer failed" }).waitFor({ timeout: 20000 });
    const again = (tab) => tab.locator('.tray-log .request-card [data-action="answer-again"]');
    for (const tab of [page, other]) {
      await again(tab).waitFor({ timeout: 20000 });
      assert.equal(await tab.locator('.tray-log .request-card [data-action="force"]').count(), 0, "running without it would not fit");
    }
    await again(other).click();
    for (const tab of [page, other]) await answers(tab).filter({ hasText: "Compared with: Dose escalation first." }).waitFor({ timeout: 20000 });
    // The tab that did not act says how the request ended, not that it is still answering.
    assert.equal(await page.locator(".tray-log .request-card").last().innerText(), "Context delivered.");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("an answer asked on a stream's Articles tab streams in a tab on another page with its card's marker line hidden", async () => {
    const owner = newOwner();
    const stream = await savedStream(call, owner);
    const reported = (page) => answers(page).filter({ hasText: "A report on the question." });
    const { page, other, context, errors } = await twoTabs(`/#streams/${stream.id}/articles`, "What is new?", reported, "/#research", owner);
    await page.fill("#assistant-input", "SHARPER please");
    await page.press("#assistant-input", "Enter");
    // Read as it streams in the other tab: the marker line never shows as text.
    const shown = [];
    await other.locator(".tray-log .msg.assistant[aria-busy]").waitFor({ timeout: 20000 });
    while (await other.locator(".tray-log .msg.assistant[aria-busy]").count()) {
      shown.push(await answers(other).last().innerText());
      await other.waitForTimeout(40);
    }
    assert.ok(shown.some((text) => text.includes("Here is a sharper query")), "it streamed here");
    assert.deepEqual(shown.filter((text) => text.includes("QUERY_SUGGESTION")), [], "no marker line as text");
    await answers(other).last().filter({ hasText: "It narrows the results a lot." }).waitFor();
    assert.doesNotMatch(await answers(other).last().innerText(), /QUERY_SUGGESTION/);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

// Browser end-to-end test of the tray's paths nobody had clicked: playwright-core drives
// /usr/bin/chromium against `wrangler dev` with only the offline provider (no key). A chip sends
// its value and is answered; an action button opens another page; a filter card's Accept sets
// the dates and searches again; on a context card, a suggested excerpt is attached with one click
// and the other slot skipped, and the answer names what was attached; the Context panel lists
// what the assistant can read (and shows an artifact's text), and attaches an artifact to a
// waiting card.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { savedStream } from "../e2e/fixtures.mjs";
import { apiCaller, newOwner, startStack } from "../e2e/harness.mjs";
import { CHROMIUM_ARGS, ownerTab } from "./tabs.mjs";

let stack;
let browser;
const call = apiCaller(() => stack.base);

before(async () => {
  stack = await startStack({
    providers: () => [{ name: "offline", kind: "offline" }, { name: "offline-analyst", kind: "offline" }],
    overrides: { LLM_PROVIDER: "offline" },
  });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Waits until the tray holds more than `n` finished answers; the last one. */
async function answerAfter(page, n) {
  await page.waitForFunction((n) => document.querySelectorAll(".tray-log .msg.assistant:not([aria-busy])").length > n, n, { timeout: 20000 });
  return page.locator(".tray-log .msg.assistant").last();
}

/** Asks the tray `message`; its answer once whole. */
async function ask(page, message) {
  const n = await page.locator(".tray-log .msg.assistant").count();
  await page.fill("#assistant-input", message);
  await page.press("#assistant-input", "Enter");
  return answerAfter(page, n);
}

/** A completed research job of `owner`, run by the two offline providers. */
async function completedJob(owner) {
  const draft = await call("POST", "/api/research/draft", { owner, body: { prompt: "Compare EGFR inhibitors", selected_llms: ["offline", "offline-analyst"], synthesis_llm: "offline" } });
  assert.equal(draft.status, 201, draft.text);
  assert.equal((await call("POST", "/api/research", { owner, body: { research_id: draft.json.id } })).status, 200);
  for (const deadline = Date.now() + 30000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    const job = (await call("GET", `/api/research/${draft.json.id}`, { owner })).json;
    if (job.status === "completed") return job;
  }
  throw new Error("the job did not complete");
}

describe("the tray's paths", () => {
  test("a chip sends its value; an action button opens its page", async () => {
    const { page, context, errors } = await ownerTab(browser, stack.base, newOwner(), "/#research");
    const hello = await ask(page, "hello");
    const chip = hello.locator(".chip", { hasText: "My research" });
    const n = await page.locator(".tray-log .msg.assistant").count();
    await chip.click();
    await page.locator(".tray-log .msg.user", { hasText: "List my research" }).waitFor();
    const listed = await answerAfter(page, n);
    assert.match(await listed.innerText(), /no research jobs yet/i);
    await page.locator(".tray-log .msg.assistant").nth(n - 1).locator("[data-action=navigate]", { hasText: "Open streams" }).click();
    await page.waitForFunction(() => location.hash.startsWith("#streams"));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a filter card's Accept sets the dates and searches again", async () => {
    const owner = newOwner();
    const stream = await savedStream(call, owner);
    const { page, context, errors } = await ownerTab(browser, stack.base, owner, `/#streams/${stream.id}/articles`);
    await page.waitForSelector("#article-query");
    const searches = stack.fake.eutils.requests.length;
    const card = (await ask(page, "Only articles since 2020")).locator(".payload[data-type=filter_suggestion]");
    await card.locator("button:has-text('Accept')").click();
    await card.locator(".card-status:has-text('Applied.')").waitFor({ timeout: 15000 });
    assert.equal(await page.inputValue("#article-mindate"), "2020");
    assert.ok(stack.fake.eutils.requests.slice(searches).some((r) => r.params.mindate === "2020"), "searched again from 2020");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("Context lists what the assistant can read of the job in view; an artifact attaches to a waiting card", async () => {
    const owner = newOwner();
    const job = await completedJob(owner);
    const { page, context, errors } = await ownerTab(browser, stack.base, owner, "/#research");
    await page.locator(`.card[data-id="${job.id}"] h3`).click(); // in focus: the job in view
    await page.click(".tray-head button:has-text('Context')");
    const panel = page.locator(".tray-artifacts");
    await panel.locator("h4", { hasText: "Phase 2" }).waitFor({ timeout: 15000 });
    await panel.locator("h4", { hasText: "Phase 3" }).waitFor();
    const summary = panel.locator(`li[data-key-path="research/${job.id}/synthesis/summary"]`);
    assert.match(await summary.innerText(), /summary, [\d,]+ characters/);
    assert.equal(await summary.locator("[data-action=attach-artifact]").count(), 0, "nothing to attach to while no card waits");
    // Show reads its text as the model would; Hide puts it away.
    const points = panel.locator(`li[data-key-path="research/${job.id}/synthesis/points_of_interest"]`);
    await points.locator("[data-action=show-artifact]").click();
    await points.locator("pre.artifact-text").waitFor();
    const shownText = await points.locator("pre.artifact-text").innerText();
    assert.ok(job.points_of_interest.length && job.points_of_interest.every((p) => shownText.includes(p)), shownText);
    assert.equal(await points.locator("[data-action=show-artifact]").innerText(), "Hide");
    await points.locator("[data-action=show-artifact]").click();
    assert.equal(await points.locator(".artifact-text").count(), 0);
    await page.click(".tray-head button:has-text('Context')");

    await page.fill("#assistant-input", "Compare this with my notes");
    await page.press("#assistant-input", "Enter");
    await page.locator(".request-card").waitFor({ timeout: 20000 });
    const n = await page.locator(".tray-log .msg.assistant").count();
    await page.click(".tray-head button:has-text('Context')");
    await summary.locator("[data-action=attach-artifact]").click();
    const answer = await answerAfter(page, n);
    assert.match(await answer.innerText(), /\[Phase 0\] Your notes to compare with[^:]*: /);
    await page.waitForFunction(() => document.querySelector(".request-card")?.innerText === "Context delivered.", null, { timeout: 10000 });
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a context card: a suggested excerpt attached with one click, the other slot skipped", async () => {
    const owner = newOwner();
    await completedJob(owner);
    const { page, context, errors } = await ownerTab(browser, stack.base, owner, "/#research");
    await page.locator(".card").first().waitFor();
    await page.fill("#assistant-input", "Compare the findings with my notes");
    await page.press("#assistant-input", "Enter");
    const card = page.locator(".request-card");
    await card.waitFor({ timeout: 20000 });
    const suggested = card.locator(".request-slot", { hasText: "points of interest" });
    const n = await page.locator(".tray-log .msg.assistant").count();
    await suggested.locator('[data-action="attach-suggested"]').first().click();
    await card.locator(".request-status:has-text('Delivered; the assistant still needs the rest.')").waitFor({ timeout: 15000 });
    await card.locator(".request-slot", { hasText: "Your notes" }).locator('[data-action="skip"]').click();
    const answer = await answerAfter(page, n);
    assert.match(await answer.innerText(), /\[Phase 3\] [^:]*points of interest[^:]*: /);
    await page.waitForFunction(() => document.querySelector(".request-card")?.innerText === "Context delivered; the rest skipped.", null, { timeout: 10000 });
    assert.deepEqual(errors, []);
    await context.close();
  });
});

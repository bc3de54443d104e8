// Browser end-to-end tests of the Streams page and the assistant tray: playwright-core drives
// /usr/bin/chromium against `wrangler dev` with only the built-in offline provider (as a
// newcomer with no API key has it) and the fake E-utilities. A stream is saved from the guided
// chat, its articles searched; in the tray a query suggestion is Accepted into the search, a
// question is answered from the summaries on screen, a research question fills the Research
// form, and a reload resumes the conversation. Screenshots go to tests/browser/screenshots.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { savedStream } from "../e2e/fixtures.mjs";
import { apiCaller, newOwner, startStack } from "../e2e/harness.mjs";

const SHOTS = new URL("./screenshots/", import.meta.url).pathname;
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
let stack;
let browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
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

async function openPage(path, viewport = { width: 1440, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(stack.base + path);
  return { page, context, errors };
}

async function step(page, id) {
  await page.waitForSelector(`.steps li[aria-current="step"][data-step="${id}"]`, { timeout: 15000 });
  await page.waitForSelector("#chat-input:not([disabled])");
}

/** Asks the assistant and waits for the complete answer. */
async function ask(page, message) {
  const answers = await page.locator(".tray-log .msg.assistant").count();
  await page.fill("#assistant-input", message);
  await page.press("#assistant-input", "Enter");
  const answer = page.locator(".tray-log .msg.assistant").nth(answers);
  await answer.waitFor();
  await page.waitForFunction((n) => document.querySelectorAll(".tray-log .msg.assistant")[n]?.getAttribute("aria-busy") === null, answers, { timeout: 20000 });
  return answer;
}

describe("streams and the assistant, offline", () => {
  test("save a stream from the guided chat, search its articles, and use the assistant on every page", async () => {
    const { page, context, errors } = await openPage("/#chat");
    // The guided chat with the offline provider, to a confirmed configuration.
    await page.waitForSelector("#chat-input");
    await page.fill("#chat-input", "Track EGFR resistance research for our lung programme");
    await page.press("#chat-input", "Enter");
    await step(page, "business_goals");
    await page.fill("#chat-input", "Pipeline decisions, Partnering");
    await page.press("#chat-input", "Enter");
    await step(page, "stream_type");
    await page.click(".chip >> text=scientific");
    await step(page, "focus_areas");
    await page.check("label:has-text('Oncology') input");
    await page.click(".controls .actions button.btn");
    await step(page, "competitors");
    await page.click("button:has-text('Skip')");
    await step(page, "keywords");
    await page.fill("#chat-input", "EGFR, resistance");
    await page.press("#chat-input", "Enter");
    await step(page, "review");
    await page.click("button:has-text('Confirm')");
    await page.click("button:has-text('Save as a stream')", { timeout: 15000 });

    // The Streams page opens on the new stream; its Articles tab searches its keywords.
    await page.waitForSelector(".stream-body h2:has-text('Track EGFR resistance research')");
    assert.equal(await page.inputValue("#article-query"), "(EGFR OR resistance) AND (Oncology)");
    await page.waitForSelector(".result", { timeout: 15000 });
    assert.match(await page.locator(".articles p.muted").first().innerText(), /articles · page 1 of/);
    await page.screenshot({ path: `${SHOTS}streams-articles.png` });

    // The assistant: a query suggestion, Accepted into the search.
    await page.click(".tray-toggle");
    await page.waitForSelector("#assistant-input");
    const searches = stack.fake.eutils.requests.length;
    const suggestion = await ask(page, "EGFR resistance articles");
    const card = suggestion.locator(".payload[data-type=query_suggestion]");
    await card.waitFor();
    assert.match(await card.locator("code").innerText(), /^EGFR\[Title\/Abstract\] AND resistance\[Title\/Abstract\]$/);
    assert.doesNotMatch(await suggestion.innerText(), /QUERY_SUGGESTION|SUGGESTED_VALUES/);
    assert.match(await suggestion.innerText(), /offline assistant: rule-based, not an LLM/);
    await page.screenshot({ path: `${SHOTS}assistant-query-card.png` });
    await card.locator("button:has-text('Accept')").click();
    await card.locator(".card-status:has-text('Applied.')").waitFor({ timeout: 15000 });
    assert.equal(await page.inputValue("#article-query"), "EGFR[Title/Abstract] AND resistance[Title/Abstract]");
    assert.ok(stack.fake.eutils.requests.slice(searches).some((r) => r.params.term === "EGFR[Title/Abstract] AND resistance[Title/Abstract]"));

    // A question answered from the summaries on screen.
    const years = await page.$$eval(".result .muted", (rows) => rows.map((r) => r.textContent.split(" · ")[1]));
    const counts = {};
    for (const year of years) counts[year] = (counts[year] ?? 0) + 1;
    const top = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
    const answer = await ask(page, "Which year is most common among these?");
    assert.match(await answer.innerText(), new RegExp(`the most common year is ${top[0]} \\(${top[1]} items\\)`));

    // The research page: a research question from the tools, Accepted into the form.
    await page.click("#tab-research");
    await page.waitForSelector("#new-prompt");
    const draft = await ask(page, "Draft a research question about EGFR resistance mechanisms in lung cancer");
    const draftCard = draft.locator(".payload[data-type=research_draft_suggestion]");
    await draftCard.waitFor();
    assert.match(await draft.locator(".tool-rows li[data-tool=create_research_draft]").getAttribute("data-state"), /done/);
    await draftCard.locator("button:has-text('Fill the research form')").click();
    await page.waitForFunction(() => document.querySelector("#new-prompt")?.value === "EGFR resistance mechanisms in lung cancer");
    await page.screenshot({ path: `${SHOTS}assistant-research-draft.png` });

    // A reload resumes the conversation, its cards included.
    await page.reload();
    await page.waitForSelector(".tray-log .payload[data-type=research_draft_suggestion]", { timeout: 15000 });
    assert.equal(await page.locator(".tray-log .msg.user").count(), 3);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("cards keep their state: accepted and dismissed come back so after a reload and in another tab", async () => {
    const owner = newOwner();
    const stream = await savedStream(apiCaller(() => stack.base), owner);
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addInitScript((token) => localStorage.setItem("stepwise.owner.v1", token), owner);
    const errors = [];
    const open = async () => {
      const page = await context.newPage();
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(`${stack.base}/#streams/${stream.id}/articles`);
      await page.waitForSelector("#article-query");
      // The tray opens by itself where it was left open (wide screens).
      await page.waitForSelector(".tray-toggle");
      if ((await page.getAttribute(".tray-toggle", "aria-expanded")) !== "true") await page.click(".tray-toggle");
      return page;
    };
    const first = await open();
    const query = (await ask(first, "EGFR resistance articles")).locator(".payload[data-type=query_suggestion]");
    await query.locator("button:has-text('Accept')").click();
    await query.locator(".card-status:has-text('Applied.')").waitFor({ timeout: 15000 });
    const filter = (await ask(first, "Only articles since 2020")).locator(".payload[data-type=filter_suggestion]");
    await filter.waitFor();
    // A second tab shows both cards; the dismissal in the first reaches it live.
    const second = await open();
    const filterThere = second.locator(".payload[data-type=filter_suggestion]");
    await filterThere.waitFor({ timeout: 15000 });
    await filter.locator("button:has-text('Dismiss')").click();
    await filterThere.waitFor({ state: "hidden", timeout: 10000 });
    assert.equal(await filterThere.getAttribute("data-state"), "dismissed");
    for (const page of [second, first]) {
      if (page === first) await page.reload();
      const applied = page.locator(".payload[data-type=query_suggestion]");
      await applied.locator(".card-status:has-text('Applied.')").waitFor({ timeout: 15000 });
      assert.equal(await applied.getAttribute("data-state"), "accepted");
      assert.ok(await applied.locator("button:has-text('Accept')").isDisabled(), "an applied card is not applied twice");
      await page.locator(".payload[data-type=filter_suggestion][data-state=dismissed]").waitFor({ state: "attached", timeout: 15000 });
    }
    // The API refuses what cannot be: a card accepted already, a card that is not there, a stranger.
    const call = apiCaller(() => stack.base);
    const id = await first.evaluate(() => localStorage.getItem("stepwise.assistant.v1"));
    const read = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
    const answer = read.messages.findIndex((m) => m.payloads?.some((p) => p.type === "query_suggestion"));
    assert.equal(read.messages[answer].cards["0"].outcome, "accepted");
    const settled = await call("POST", `/api/assistant/conversations/${id}/cards`, { owner, body: { message: answer, payload: 0, outcome: "dismissed" } });
    assert.deepEqual([settled.status, settled.json.error.code], [409, "card_settled"], settled.text);
    const missing = await call("POST", `/api/assistant/conversations/${id}/cards`, { owner, body: { message: 0, payload: 0, outcome: "dismissed" } });
    assert.deepEqual([missing.status, missing.json.error.code], [404, "card_not_found"]);
    const stranger = await call("POST", `/api/assistant/conversations/${id}/cards`, { owner: newOwner(), body: { message: answer, payload: 0, outcome: "dismissed" } });
    assert.deepEqual([stranger.status, stranger.json.error.code], [404, "conversation_not_found"]);
    const bad = await call("POST", `/api/assistant/conversations/${id}/cards`, { owner, body: { message: answer, payload: 0, outcome: "loved" } });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("on a narrow screen the tray is a drawer; history lists past conversations", async () => {
    const { page, context, errors } = await openPage("/#research", { width: 390, height: 844 });
    await page.waitForSelector("#new-prompt");
    await page.click(".tray-toggle");
    const answer = await ask(page, "hello");
    assert.match(await answer.innerText(), /On this page I can/);
    assert.ok((await answer.locator(".chip").count()) > 0);
    const box = await page.locator(".tray").boundingBox();
    assert.ok(box.width <= 390, `the drawer fits the screen (${box.width})`);
    await page.screenshot({ path: `${SHOTS}assistant-drawer-narrow.png` });
    await page.click(".tray-head button:has-text('History')");
    await page.waitForSelector(".tray-history li");
    assert.ok((await page.locator(".tray-history li").count()) >= 1);
    await page.click(".tray-head button:has-text('New')");
    assert.equal(await page.locator(".tray-log .msg").count(), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

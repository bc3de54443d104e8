// Browser tests of what a newcomer with no API key meets on the Research page and around the
// assistant tray: playwright-core drives /usr/bin/chromium against `wrangler dev` with the three
// built-in offline providers (issue 28). The offline assistant answers from the job in view (its synthesis
// and every provider's report) and compares all of its reports; the tray says it is thinking
// while an answer is on its way, starts closed on a narrow screen, closes with Escape and gives
// focus back; the header fits a phone; withdrawing a share link asks first, and the withdrawn
// link shows a small page, not JSON; the app has a favicon; counts of one are singular; a card
// applied after a failure says so in the success style.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { savedStream } from "../e2e/fixtures.mjs";
import { apiCaller, newOwner, startStack } from "../e2e/harness.mjs";

const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const QUESTION = "How do heat pumps compare with gas boilers for an old house?";
let stack;
let browser;

before(async () => {
  stack = await startStack({
    providers: () => ["offline", "offline-analyst", "offline-critic"].map((name) => ({ name, kind: "offline" })),
    overrides: { LLM_PROVIDER: "offline" },
  });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A page of a fresh browser profile (owner `owner` when given) at `path`. */
async function openPage(path, viewport = WIDE, owner) {
  const context = await browser.newContext({ viewport });
  if (owner) await context.addInitScript((token) => localStorage.setItem("stepwise.owner.v1", token), owner);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(stack.base + path);
  return { page, context, errors };
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

/** Runs a research job of the three offline providers from the form and waits for its card. */
async function completedJob(page) {
  await page.fill("#new-prompt", QUESTION);
  await page.click("button:has-text('Create draft')");
  await page.click("button:has-text('Start research')");
  const card = page.locator(".card").filter({ has: page.locator("[data-status=completed]") }).first();
  await card.waitFor({ timeout: 30000 });
  await card.locator("h3").click(); // in focus: the assistant's job in view
  return card;
}

describe("a newcomer's research, offline", () => {
  test("while an answer is on its way the tray says the assistant is thinking, to screen readers too", async () => {
    const { page, context, errors } = await openPage("/#research");
    await page.waitForSelector("#new-prompt");
    await page.click(".tray-toggle");
    let release;
    const held = new Promise((resolve) => (release = resolve));
    await page.route("**/api/assistant", async (route) => (await held, route.continue()), { times: 1 });
    await page.fill("#assistant-input", "hello");
    await page.press("#assistant-input", "Enter");
    const thinking = page.locator(".tray-log .msg.assistant[aria-busy=true] [role=status]");
    await thinking.waitFor({ timeout: 10000 });
    assert.equal(await thinking.getAttribute("aria-live"), "polite");
    assert.match(await thinking.innerText(), /Thinking…/);
    assert.ok(await thinking.isVisible());
    release();
    await page.waitForFunction(() => document.querySelector(".tray-log .msg.assistant")?.getAttribute("aria-busy") === null, null, { timeout: 20000 });
    const answer = page.locator(".tray-log .msg.assistant").first();
    assert.equal(await answer.locator("[role=status]").count(), 0, "the indicator goes with the answer");
    assert.match(await answer.innerText(), /On this page I can/);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("the offline assistant answers from the job in view and compares every one of its reports", async () => {
    const { page, context, errors } = await openPage("/#research");
    await page.waitForSelector("#new-prompt");
    await completedJob(page);
    await page.click(".tray-toggle");

    // The findings come from the job on screen, not from a PubMed search.
    const findings = await ask(page, "What do the findings say?");
    assert.equal(await findings.locator(".tool-rows li").count(), 0, "no tool was needed");
    const text = await findings.innerText();
    assert.doesNotMatch(text, /search_pubmed/);
    assert.match(text, /From the job on screen, ".*" \(completed\):/);
    assert.match(text, /The synthesis by offline says:\n> Synthesis of 3 sources\./);
    for (const opening of [/- offline: Key terms: heat, pumps, boilers, house\./, /- offline-analyst: Evidence to weigh:/, /- offline-critic: Caveats:/]) assert.match(text, opening);
    assert.doesNotMatch(text, /SUGGESTED_VALUES/);

    // "Compare the reports" compares all three, and finds more than their names.
    const compared = await ask(page, "Compare the reports");
    const rows = compared.locator(".tool-rows li[data-tool=compare_reports]");
    assert.equal(await rows.count(), 3);
    const comparison = await compared.innerText();
    for (const pair of ["offline and offline-analyst", "offline and offline-critic", "offline-analyst and offline-critic"]) assert.match(comparison, new RegExp(`Reports of ${pair} for`));
    assert.doesNotMatch(comparison, /^Only (offline[\w-]*): \1$/m);
    assert.match(comparison, /^Only offline-critic: .*caveats/m);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a count of one item on screen is said in the singular", async () => {
    const { page, context, errors } = await openPage("/#research");
    await page.waitForSelector("#new-prompt");
    await page.fill("#new-prompt", QUESTION);
    await page.click("button:has-text('Create draft')");
    await page.locator(".card [data-status=draft]").waitFor();
    await page.click(".tray-toggle");
    const answer = await ask(page, "Which year is most common among these?");
    assert.match(await answer.innerText(), /The one item on screen does not say its year\./);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("withdrawing a share link asks first; the withdrawn link shows one small page, like a link never shared", async () => {
    const { page, context, errors } = await openPage("/#research");
    await page.waitForSelector("#new-prompt");
    const card = await completedJob(page);
    await card.locator("button:has-text('Publish a share link')").click();
    const link = card.locator("a.share");
    await link.waitFor();
    const url = await link.getAttribute("href");
    const visitor = await context.newPage();
    assert.equal((await visitor.goto(url)).status(), 200);

    const asked = [];
    page.once("dialog", (dialog) => (asked.push(dialog.message()), dialog.dismiss()));
    await card.locator("button:has-text('Withdraw')").click();
    await page.waitForTimeout(300);
    assert.equal(asked.length, 1, "withdrawing asks for confirmation");
    assert.match(asked[0], /^Withdraw the share link of ".*"\?/);
    assert.equal(await card.locator("a.share").count(), 1, "dismissed: the link stays");
    page.once("dialog", (dialog) => dialog.accept());
    await card.locator("button:has-text('Withdraw')").click();
    await page.locator(".card button:has-text('Publish a share link')").waitFor();

    const pages = [];
    for (const path of [new URL(url).pathname, `/share/${"0".repeat(32)}`, "/share/not-an-id"]) {
      const response = await visitor.goto(stack.base + path);
      assert.equal(response.status(), 404, path);
      assert.match(response.headers()["content-type"], /^text\/html/, path);
      assert.equal(await visitor.locator("h1").innerText(), "This report is no longer shared");
      assert.equal((await visitor.locator("body").innerText()).trim(), "This report is no longer shared", `${path}: nothing else is said`);
      pages.push(await response.text());
    }
    assert.equal(new Set(pages).size, 1, "the same page whether the link was withdrawn, never shared or malformed");
    assert.doesNotMatch(pages[0], /not_found|"error"|heat pumps/i);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe("the tray and the header on a phone and on a wide screen", () => {
  test("on a phone the header fits in two short rows, every section tab on screen", async () => {
    const { page, context, errors } = await openPage("/#research", PHONE);
    await page.waitForSelector(".tray-toggle");
    const header = await page.locator("header.top").boundingBox();
    assert.ok(header.height <= 100, `the header is ${header.height} px high at 390 px`);
    for (const tab of ["#tab-chat", "#tab-streams", "#tab-research", "#tab-help", "#tab-data", ".tray-toggle"]) {
      const box = await page.locator(tab).boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `${tab} is on screen`);
    }
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("on a phone a drawer left open starts closed on the next load", async () => {
    const { page, context, errors } = await openPage("/#research", PHONE);
    await page.waitForSelector(".tray-toggle");
    await page.click(".tray-toggle");
    assert.equal(await page.locator("#assistant").isVisible(), true);
    await page.reload();
    await page.waitForSelector(".tray-toggle");
    await page.waitForSelector("#new-prompt");
    assert.equal(await page.locator("#assistant").isVisible(), false, "a drawer left open does not cover the page on the next load");
    assert.equal(await page.getAttribute(".tray-toggle", "aria-expanded"), "false");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("on a phone Escape closes the drawer and gives focus back to the toggle", async () => {
    const { page, context, errors } = await openPage("/#research", PHONE);
    await page.waitForSelector(".tray-toggle");
    await page.click(".tray-toggle");
    await page.waitForFunction(() => document.activeElement?.id === "assistant-input");
    await page.keyboard.press("Escape");
    assert.equal(await page.locator("#assistant").isVisible(), false, "Escape closes the drawer");
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains("tray-toggle")), true, "focus goes back to the toggle");
    assert.equal(await page.getAttribute(".tray-toggle", "aria-expanded"), "false");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("on a wide screen the open tray is remembered, and Escape in it closes it", async () => {
    const { page, context, errors } = await openPage("/#research", WIDE);
    await page.waitForSelector("#new-prompt");
    await page.click(".tray-toggle");
    await page.reload();
    await page.waitForSelector("#new-prompt");
    await page.locator("#assistant").waitFor({ state: "visible" });
    // Escape elsewhere on the page leaves the column alone.
    await page.focus("#new-prompt");
    await page.keyboard.press("Escape");
    assert.equal(await page.locator("#assistant").isVisible(), true);
    await page.focus("#assistant-input");
    await page.keyboard.press("Escape");
    assert.equal(await page.locator("#assistant").isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains("tray-toggle")), true);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe("small things", () => {
  test("the app has a favicon, at /favicon.ico too", async () => {
    const response = await fetch(`${stack.base}/favicon.ico`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type"), /^image\//);
    const bytes = new Uint8Array(await response.arrayBuffer());
    assert.deepEqual([...bytes.slice(0, 4)], [0, 0, 1, 0], "an ICO file");
    const { page, context } = await openPage("/#research");
    const icons = await page.$$eval("link[rel=icon]", (links) => links.map((l) => new URL(l.href).pathname));
    assert.ok(icons.includes("/favicon.ico") && icons.includes("/favicon.svg"), icons.join(", "));
    const svg = await fetch(`${stack.base}/favicon.svg`);
    assert.equal(svg.status, 200);
    assert.match(await svg.text(), /^<svg /);
    await context.close();
  });

  test("a card applied after a failed try says so in the success style", async () => {
    const owner = newOwner();
    const stream = await savedStream(apiCaller(() => stack.base), owner);
    const { page, context, errors } = await openPage(`/#streams/${stream.id}/settings`, WIDE, owner);
    await page.waitForSelector(".tray-toggle");
    await page.click(".tray-toggle");
    const answer = await ask(page, "Add keyword C797S");
    const card = answer.locator(".payload[data-type=stream_config_suggestion]");
    await card.waitFor();
    // The first try fails on the server's side; the second goes through.
    await page.route(`**/api/streams/${stream.id}`, (route) => (route.request().method() === "PUT" ? route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ error: { code: "unavailable", message: "Try again later." } }) }) : route.continue()), { times: 1 });
    const accept = card.locator("button:has-text('Accept')");
    await accept.click();
    const status = card.locator(".card-status");
    await page.waitForFunction((el) => el.classList.contains("error"), await status.elementHandle());
    const red = await status.evaluate((el) => getComputedStyle(el).color);
    await accept.click();
    await card.locator(".card-status:has-text('Applied.')").waitFor({ timeout: 15000 });
    assert.equal(await status.evaluate((el) => el.classList.contains("error")), false, "no longer in the error style");
    assert.equal(await status.evaluate((el) => el.classList.contains("ok")), true, "in the success style");
    const green = await status.evaluate((el) => getComputedStyle(el).color);
    assert.notEqual(green, red);
    assert.equal(green, "rgb(30, 122, 60)");
    assert.deepEqual(errors, []);
    await context.close();
  });
});

// Browser end-to-end tests: playwright-core drives /usr/bin/chromium (headless) against the app
// served by `wrangler dev`, with the fake provider playing the model (replies scripted by the
// current step named in the system prompt) and the research providers. Screenshots of the main
// screens are saved to tests/browser/screenshots (test artifacts, shown in the README and docs/).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { fakeProvider, startStack } from "../e2e/harness.mjs";

const SHOTS = new URL("./screenshots/", import.meta.url).pathname;
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
let stack;
let browser;
const faults = { chat: false, gamma: false, alpha: false }; // 429 to the chat / 500 to a provider
const chatRequests = () => stack.fake.requests.filter((r) => r.model === "chat-model");

/** The fake model's reply for a chat turn: it extracts typed answers and asks the next question. */
function chatReply(request) {
  const step = request.system.match(/Current step: (\w+)/)?.[1];
  const user = request.body.messages.at(-1)?.content ?? "";
  if (user.startsWith("Go back to")) return "Sure, let's revisit this step. What should it be now?\n";
  switch (step) {
    case "purpose":
      return `Thanks, noted.\nEXTRACTED_DATA: purpose=${user}\nWhich business goals should it serve?\nSUGGESTIONS: Spot launches early, Benchmark pricing, Find partners\n`;
    case "business_goals":
      return "Which business goals should it serve?\nSUGGESTIONS: Spot launches early, Benchmark pricing, Find partners\n";
    case "stream_type":
      return "What type of stream is this?\nSUGGESTIONS: competitive, regulatory, clinical, scientific\n";
    case "focus_areas":
      return "Which areas should it cover?\nOPTIONS: Oncology|Cardiology|Immunology\nPROPOSED_MESSAGE: Use these areas\n";
    case "competitors":
      return "Which competitors should it track? You can skip this step.\n";
    case "keywords":
      return user.includes(",")
        ? `Got them.\nEXTRACTED_DATA: keywords=[${user.split(",").map((k) => JSON.stringify(k.trim())).join(",")}]\nPlease review the configuration and press Confirm.\n`
        : "Which keywords should it search for?\nSUGGESTIONS: PD-1, biosimilar\n";
    case "review":
      return "Please review the configuration and press Confirm.\n";
    default:
      return "All done. Thank you!\n";
  }
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  stack = await startStack({
    providers: (url) => [
      fakeProvider(url, "chat", "openai", "chat-model"),
      fakeProvider(url, "alpha", "openai", "alpha"),
      fakeProvider(url, "beta", "anthropic", "beta"),
      fakeProvider(url, "gamma", "gemini", "gamma"),
    ],
    overrides: { LLM_PROVIDER: "chat", RESEARCH_TIMEOUT_MS: "20000" },
  });
  stack.fake.script((request) => {
    if (request.model === "chat-model") {
      if (request.system.startsWith("You name research jobs")) return { reply: "Heat pumps versus boilers" };
      if (!request.system.includes("Current step:")) return { reply: "Both sources agree: heat pumps cost less to run [Source 1: alpha] [Source 2: beta].", latencyMs: 1200 };
      return faults.chat ? { status: 429 } : { reply: chatReply(request) };
    }
    if (request.model === "gamma" && faults.gamma) return { status: 500 };
    if (request.model === "alpha" && faults.alpha) return { status: 500 };
    return { reply: `Report of ${request.model}: heat pumps win on running costs.`, latencyMs: 300 };
  });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function openPage(path = "/", viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(stack.base + path);
  return { page, context, errors };
}

const currentStep = (page) => page.locator('.steps li[aria-current="step"]').getAttribute("data-step");
async function waitForStep(page, step) {
  await page.waitForSelector(`.steps li[aria-current="step"][data-step="${step}"]`, { timeout: 15000 });
  await page.waitForSelector("#chat-input:not([disabled])");
}

describe("guided workflow chat", () => {
  test("the whole research_stream flow by clicking, with a local validation error and a reload", async () => {
    const { page, context, errors } = await openPage("/#chat");
    await page.waitForSelector("#chat-input");
    assert.equal(await currentStep(page), "purpose");
    assert.equal(await page.locator(".steps li").count(), 7);
    await page.screenshot({ path: `${SHOTS}chat-start.png` });

    // Free text → purpose extracted; the chips of the next step appear.
    await page.fill("#chat-input", "Track competitor launches");
    await page.press("#chat-input", "Enter");
    await waitForStep(page, "business_goals");
    assert.doesNotMatch(await page.locator(".log").innerText(), /EXTRACTED_DATA|SUGGESTIONS/);
    assert.equal(await page.locator('dd[data-field="purpose"]').innerText(), "Track competitor launches");

    // A chip sends option_selected.
    await page.click(".chip >> text=Spot launches early");
    await waitForStep(page, "stream_type");
    await page.click(".chip >> text=competitive");
    await waitForStep(page, "focus_areas");

    // Continue with nothing checked: the wasm validation refuses it and no request is made.
    const before = chatRequests().length;
    await page.click("button:has-text('Use these areas')");
    const error = page.locator(".error[role=alert]");
    await error.waitFor();
    assert.match(await error.innerText(), /at least one/i);
    assert.equal(await error.getAttribute("data-code"), "selection_required");
    await page.waitForTimeout(300);
    assert.equal(chatRequests().length, before, "a request was sent despite the validation error");
    await page.screenshot({ path: `${SHOTS}chat-validation-error.png` });

    // Checkboxes + Continue labelled by PROPOSED_MESSAGE.
    await page.check("label:has-text('Oncology') input");
    await page.check("label:has-text('Immunology') input");
    await page.screenshot({ path: `${SHOTS}chat-options.png` });
    await page.click("button:has-text('Use these areas')");
    await waitForStep(page, "competitors");
    assert.equal(await page.locator('dd[data-field="focus_areas"]').innerText(), "Oncology, Immunology");

    // Reload mid-flow: the conversation resumes at the right step.
    await page.reload();
    await waitForStep(page, "competitors");
    assert.match(await page.locator(".log").innerText(), /Track competitor launches/);

    // Skip on the optional step.
    await page.click("button:has-text('Skip')");
    await waitForStep(page, "keywords");
    assert.match(await page.locator('.steps li[data-step="competitors"]').innerText(), /skipped/);

    // Typing while chips are shown (Scenario 6).
    await page.fill("#chat-input", "PD-1, biosimilar");
    await page.press("#chat-input", "Enter");
    await waitForStep(page, "review");

    // Inline edit through the pencil: no chat message, no step change.
    const messages = await page.locator(".msg").count();
    const turns = chatRequests().length;
    await page.click("button[aria-label='Edit purpose']");
    await page.fill("#edit-purpose", "Track rival launches in Europe");
    await page.click(".config button:has-text('Save')");
    await page.waitForSelector('dd[data-field="purpose"]:has-text("Track rival launches in Europe")');
    assert.equal(await page.locator(".msg").count(), messages);
    assert.equal(chatRequests().length, turns);
    assert.equal(await currentStep(page), "review");
    await page.screenshot({ path: `${SHOTS}chat-review.png` });

    // Confirm on review; a reload shows the finished configuration, not the review again.
    await page.click("button:has-text('Confirm')");
    await page.waitForSelector(".steps li.done[data-step='review']", { timeout: 15000 });
    await page.reload();
    await page.waitForSelector(".steps li.done[data-step='review']", { timeout: 15000 });
    await page.waitForSelector(".controls .done:has-text('This configuration is complete.')");
    assert.equal(await page.locator("button:has-text('Confirm')").count(), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("clicking a completed step in the list goes back to it (edge case 6)", async () => {
    const { page, context, errors } = await openPage("/#chat");
    await page.waitForSelector("#chat-input");
    await page.click("button:has-text('Start over')");
    await page.fill("#chat-input", "Watch biosimilar entrants");
    await page.press("#chat-input", "Enter");
    await waitForStep(page, "business_goals");
    await page.click(".chip >> text=Benchmark pricing");
    await waitForStep(page, "stream_type");
    const turns = chatRequests().length;
    await page.click(".steps li[data-step='purpose'] button");
    await waitForStep(page, "purpose");
    const sent = chatRequests().at(-1);
    assert.equal(chatRequests().length, turns + 1);
    assert.match(sent.body.messages.at(-1).content, /Go back to purpose/);
    // The values collected so far stay.
    assert.equal(await page.locator('dd[data-field="purpose"]').innerText(), "Watch biosimilar entrants");
    assert.equal(await page.locator('dd[data-field="business_goals"]').innerText(), "Benchmark pricing");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a server error is shown plainly with a retry, on a narrow screen", async () => {
    const { page, context } = await openPage("/#chat", { width: 390, height: 844 });
    await page.waitForSelector("#chat-input");
    await page.click("button:has-text('Start over')");
    faults.chat = true;
    await page.fill("#chat-input", "Track launches");
    await page.press("#chat-input", "Enter");
    const error = page.locator(".error[role=alert]");
    await error.waitFor({ timeout: 15000 });
    assert.match(await error.innerText(), /rate_limited/);
    await page.screenshot({ path: `${SHOTS}chat-error-narrow.png` });
    faults.chat = false;
    await page.click(".error button:has-text('Retry')");
    await waitForStep(page, "business_goals");
    await context.close();
  });
});

describe("research dashboard", () => {
  async function createAndStart(page, prompt) {
    await page.fill("#new-prompt", prompt);
    await page.click("button:has-text('Create draft')");
    const card = page.locator("article.card").first();
    await card.locator("[data-status=draft]").waitFor();
    await card.locator("button:has-text('Start research')").click();
    return card;
  }

  test("a job runs to completion with a synthesis, reports and a share link", async () => {
    faults.gamma = false;
    const { page, context, errors } = await openPage("/#research");
    await page.waitForSelector("#new-prompt");
    assert.equal(await page.locator("input[name=provider]").count(), 4);
    await page.uncheck("input[name=provider][value=chat]");
    await page.screenshot({ path: `${SHOTS}research-form.png` });
    const card = await createAndStart(page, "Should an old house switch to a heat pump?");
    try {
      await card.locator("[data-status=completed]").waitFor({ timeout: 20000 });
    } catch (error) {
      await page.screenshot({ path: `${SHOTS}failure-research.png`, fullPage: true });
      throw error;
    }
    // Nothing is published until the owner chooses to.
    assert.equal(await card.locator("a.share").count(), 0);
    await card.locator("button:has-text('Publish a share link')").click();
    await card.locator("a.share").waitFor({ timeout: 10000 });
    assert.match(await card.innerText(), /Synthesis by chat/);
    assert.equal(await card.locator("details summary").count(), 3);
    assert.match(await card.locator("h3").innerText(), /Heat pumps versus boilers/);
    await page.screenshot({ path: `${SHOTS}research-completed.png`, fullPage: true });
    const share = await card.locator("a.share").getAttribute("href");
    const sharePage = await context.newPage();
    await sharePage.goto(share);
    assert.match(await sharePage.locator("h1").innerText(), /Heat pumps versus boilers/);
    await sharePage.screenshot({ path: `${SHOTS}share-page.png`, fullPage: true });
    assert.deepEqual(errors, []);
    await context.close();
  });

  /** Records every status the first card shows, so short-lived ones are seen too. */
  async function recordStatuses(page) {
    await page.evaluate(() => {
      window.seenStatuses = [];
      const note = () => {
        const status = document.querySelector("article.card [data-status]")?.getAttribute("data-status");
        if (status && window.seenStatuses.at(-1) !== status) window.seenStatuses.push(status);
      };
      new MutationObserver(note).observe(document.querySelector(".cards"), { childList: true, subtree: true, attributes: true });
      note();
    });
  }

  test("one report: completed with \"Synthesis not available\"", async () => {
    const { page, context, errors } = await openPage("/#research");
    await page.waitForSelector("#new-prompt");
    for (const name of ["chat", "beta", "gamma"]) await page.uncheck(`input[name=provider][value=${name}]`);
    const card = await createAndStart(page, "Single provider question");
    await card.locator("[data-status=completed]").waitFor({ timeout: 20000 });
    await card.locator(".not-available:has-text('Synthesis not available')").waitFor();
    assert.equal(await card.locator("h4:has-text('Synthesis by')").count(), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("synthesizing, failed with Retry, and retrying are shown as they happen", async () => {
    faults.alpha = true;
    faults.gamma = true;
    const { page, context, errors } = await openPage("/#research");
    await page.waitForSelector("#new-prompt");
    for (const name of ["chat", "beta"]) await page.uncheck(`input[name=provider][value=${name}]`);
    const card = await createAndStart(page, "Every provider fails at first");
    await card.locator("[data-status=failed]").waitFor({ timeout: 20000 });
    assert.match(await card.innerText(), /All LLM calls failed/);
    await recordStatuses(page);
    faults.alpha = false;
    faults.gamma = false;
    await card.locator("button:has-text('Retry')").click();
    await card.locator("p:has-text('Synthesizing results...')").waitFor({ timeout: 20000 });
    await card.locator("[data-status=completed]").waitFor({ timeout: 20000 });
    const seen = await page.evaluate(() => window.seenStatuses);
    assert.ok(seen.includes("retrying"), `statuses seen: ${seen}`);
    assert.ok(seen.indexOf("synthesizing") > seen.indexOf("retrying"), `statuses seen: ${seen}`);
    assert.match(await card.innerText(), /Synthesis by chat/);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a partial failure asks Proceed / Retry / Cancel; Proceed completes it", async () => {
    faults.gamma = true;
    const { page, context } = await openPage("/#research");
    await page.waitForSelector("#new-prompt");
    await page.uncheck("input[name=provider][value=chat]");
    const card = await createAndStart(page, "Partial failure case");
    await card.locator("[data-status=awaiting_confirmation]").waitFor({ timeout: 20000 });
    assert.match(await card.innerText(), /gamma failed/);
    await page.screenshot({ path: `${SHOTS}research-awaiting-confirmation.png`, fullPage: true });
    faults.gamma = false;
    await card.locator("button:has-text('Proceed')").click();
    await card.locator("[data-status=completed]").waitFor({ timeout: 20000 });
    assert.match(await card.innerText(), /Synthesis by chat/);
    // The job is listed again after a reload (jobs belong to this browser's owner token).
    const id = await card.getAttribute("data-id");
    await page.reload();
    await page.waitForSelector(`article.card[data-id="${id}"] [data-status=completed]`, { timeout: 15000 });
    await context.close();
  });
});

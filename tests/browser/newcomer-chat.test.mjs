// Browser end-to-end tests of the guided chat and the Streams page as a newcomer meets them:
// playwright-core drives /usr/bin/chromium against `wrangler dev` with only the built-in offline
// provider (no API key). Each test reproduces one rough edge of issue 28: the review summary
// after a pencil edit, editing a conversation already saved as a stream, Start over, the user's
// bubble and the validation message of the options step, and renaming a stream (the chat names it
// so after; a stream deleted frees its conversation).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { startStack } from "../e2e/harness.mjs";

const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
let stack;
let browser;

before(async () => {
  stack = await startStack({
    providers: () => [{ name: "offline", kind: "offline" }],
    overrides: { LLM_PROVIDER: "offline" },
  });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function openPage(path) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
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

async function type(page, text) {
  await page.fill("#chat-input", text);
  await page.press("#chat-input", "Enter");
}

/** Answers every step with the offline provider up to the review. */
async function toReview(page, purpose = "Track EGFR resistance research") {
  await page.waitForSelector("#chat-input");
  await type(page, purpose);
  await step(page, "business_goals");
  await type(page, "Pipeline decisions, Partnering");
  await step(page, "stream_type");
  await page.click(".chip >> text=scientific");
  await step(page, "focus_areas");
  await page.check("label:has-text('Oncology') input");
  await page.click(".controls .actions button.btn");
  await step(page, "competitors");
  await page.click("button:has-text('Skip')");
  await step(page, "keywords");
  await type(page, "EGFR, resistance");
  await step(page, "review");
}

/** Confirms the review and saves the stream; answers its id (the app opens it). */
async function confirmAndSave(page) {
  await page.click("button:has-text('Confirm')");
  await page.click("button:has-text('Save as a stream')", { timeout: 15000 });
  await page.waitForURL(/#streams\/\w+$/);
  await page.waitForSelector(".stream-body h2");
  return page.url().split("#streams/")[1];
}

describe("guided chat and streams, for a newcomer", () => {
  test("a pencil edit at review updates the summary above Confirm and flags the older message", async () => {
    const { page, context, errors } = await openPage("/#chat");
    await toReview(page);
    await page.click("button[aria-label='Edit purpose']");
    await page.fill("#edit-purpose", "Follow osimertinib resistance papers");
    await page.click(".config button:has-text('Save')");
    await page.waitForSelector('dd[data-field="purpose"]:has-text("Follow osimertinib resistance papers")');

    // The summary right above Confirm is the configuration as it is now.
    const summary = page.locator(".controls .review-summary");
    await summary.waitFor({ timeout: 5000 });
    assert.match(await summary.innerText(), /Follow osimertinib resistance papers/);
    assert.doesNotMatch(await summary.innerText(), /Track EGFR resistance research/);
    const [summaryBox, confirmBox] = await Promise.all([summary.boundingBox(), page.locator(".controls button:has-text('Confirm')").boundingBox()]);
    assert.ok(summaryBox.y < confirmBox.y, "the summary is above Confirm");
    // The assistant's earlier summary, with the old purpose, says it is out of date.
    assert.match(await page.locator(".log .log-note").innerText(), /changed since.*purpose/i);

    // Both survive a reload.
    await page.reload();
    await step(page, "review");
    assert.match(await page.locator(".controls .review-summary").innerText(), /Follow osimertinib resistance papers/);
    assert.match(await page.locator(".log .log-note").innerText(), /purpose/);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a conversation saved as a stream points to the stream's settings and no longer edits itself", async () => {
    const { page, context, errors } = await openPage("/#chat");
    await toReview(page, "Watch KRAS inhibitor trials");
    const id = await confirmAndSave(page);

    await page.goto(`${stack.base}/#chat`);
    const link = page.locator(`.controls a[href="#streams/${id}/settings"]`);
    await link.waitFor({ timeout: 10000 });
    assert.match(await page.locator(".controls").innerText(), /Watch KRAS inhibitor trials/);
    // Nothing here edits the conversation any more: pencils, the input and the step links.
    assert.ok((await page.locator(".config button[aria-label^='Edit']").count()) > 0);
    for (const pencil of await page.locator(".config button[aria-label^='Edit']").all()) assert.ok(await pencil.isDisabled());
    assert.ok(await page.locator("#chat-input").isDisabled());
    assert.ok(await page.locator(".composer button[type=submit]").isDisabled());
    for (const back of await page.locator(".steps button").all()) assert.ok(await back.isDisabled());

    // The link opens the stream's Settings, where the edit does change the stream.
    await link.click();
    await page.waitForSelector("#stream-name");
    assert.match(page.url(), new RegExp(`#streams/${id}/settings$`));

    // Renamed there, the chat names it so; deleted since, the conversation is the chat's again.
    await page.fill("#stream-name", "KRAS watch");
    await page.click("button:has-text('Save name')");
    await page.waitForSelector(".settings .ok:has-text('Saved.')");
    await page.goto(`${stack.base}/#chat`);
    await page.locator(".controls", { hasText: "KRAS watch" }).waitFor({ timeout: 10000 });
    const owner = await page.evaluate(() => localStorage.getItem("stepwise.owner.v1"));
    const deleted = await fetch(`${stack.base}/api/streams/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${owner}` } });
    assert.ok(deleted.ok, `${deleted.status}`);
    await page.reload();
    await page.waitForFunction(() => document.querySelector("#chat-input")?.disabled === false, null, { timeout: 10000 });
    assert.equal(await page.locator(`.controls a[href="#streams/${id}/settings"]`).count(), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("Start over asks first, names what would be lost, and Cancel keeps everything", async () => {
    const { page, context, errors } = await openPage("/#chat");
    await page.waitForSelector("#chat-input");
    await type(page, "Map biosimilar entrants");
    await step(page, "business_goals");
    const log = await page.locator(".log").innerText();

    await page.click("button:has-text('Start over')");
    const dialog = page.locator("dialog.confirm-dialog[open]");
    await dialog.waitFor({ timeout: 5000 });
    assert.match(await dialog.innerText(), /purpose/i);
    assert.match(await dialog.innerText(), /Map biosimilar entrants/);
    await dialog.locator("button:has-text('Cancel')").click();
    await dialog.waitFor({ state: "detached", timeout: 5000 }).catch(() => dialog.waitFor({ state: "hidden", timeout: 5000 }));
    assert.equal(await page.locator(".steps li[aria-current='step']").getAttribute("data-step"), "business_goals");
    assert.equal(await page.locator('dd[data-field="purpose"]').innerText(), "Map biosimilar entrants");
    assert.equal(await page.locator(".log").innerText(), log);

    // Confirmed, it does start over; a reload stays on the new conversation.
    await page.click("button:has-text('Start over')");
    await dialog.locator("button:has-text('Erase and start over')").click();
    await step(page, "purpose");
    assert.equal(await page.locator('dd[data-field="purpose"]').innerText(), "—");
    await page.reload();
    await step(page, "purpose");
    assert.doesNotMatch(await page.locator(".log").innerText(), /Map biosimilar entrants/);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("Continue shows the chosen areas as the user's message, and its error names the step by its label", async () => {
    const { page, context, errors } = await openPage("/#chat");
    await page.waitForSelector("#chat-input");
    await type(page, "Track cardio-oncology safety signals");
    await step(page, "business_goals");
    await type(page, "Safety reviews");
    await step(page, "stream_type");
    await page.click(".chip >> text=clinical");
    await step(page, "focus_areas");

    await page.click(".controls .actions button.btn");
    const error = page.locator(".error[role=alert]");
    await error.waitFor();
    assert.equal(await error.getAttribute("data-code"), "selection_required");
    assert.doesNotMatch(await error.innerText(), /focus_areas|`/);
    assert.match(await error.innerText(), /focus areas/i);

    await page.check("label:has-text('Oncology') input");
    await page.check("label:has-text('Cardiology') input");
    await page.click(".controls .actions button.btn");
    await step(page, "competitors");
    assert.equal(await page.locator(".log .msg.user").last().innerText(), "Oncology, Cardiology");
    // The conversation the server keeps says the same after a reload.
    await page.reload();
    await step(page, "competitors");
    assert.equal(await page.locator(".log .msg.user").last().innerText(), "Oncology, Cardiology");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("renaming a stream renames it in the streams list at once", async () => {
    const { page, context, errors } = await openPage("/#chat");
    await toReview(page, "Survey PD-1 combination studies");
    const id = await confirmAndSave(page);
    await page.click(`.tabs a[href="#streams/${id}/settings"]`);
    await page.fill("#stream-name", "PD-1 combinations");
    await page.click("button:has-text('Save name')");
    await page.waitForSelector(".settings .ok:has-text('Saved.')");
    assert.equal(await page.locator(`.stream-list a[href="#streams/${id}"]`).innerText(), "PD-1 combinations");
    assert.equal(await page.locator(".stream-body h2").innerText(), "PD-1 combinations");
    assert.deepEqual(errors, []);
    await context.close();
  });
});

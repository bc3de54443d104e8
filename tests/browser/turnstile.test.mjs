// Browser end-to-end test of the optional Turnstile check (issue 31): with TURNSTILE_SECRET set,
// a new visitor's first guided turn is refused with challenge_required, the app shows the widget
// in a dialog, and once it is solved sends the same turn again with the token, which the Worker
// checks with siteverify. Cloudflare's script is stood in for by a page route (it cannot be
// fetched here), siteverify by a server on loopback; the model is the fake provider.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { startSiteverify, turnstileSettings } from "../e2e/fake-siteverify.mjs";
import { startStack } from "../e2e/harness.mjs";

const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
/** What the page gets for Cloudflare's script: a widget that is one button. */
const FAKE_WIDGET = `window.turnstile = { render(el, options) {
  const button = document.createElement("button");
  button.id = "fake-turnstile";
  button.textContent = "I am a person (site key " + options.sitekey + ")";
  button.onclick = () => options.callback("good-token");
  el.append(button);
  return "widget-1";
} };`;

describe("the Turnstile check in the app", () => {
  let stack;
  let browser;
  let verifier;
  let verifications;
  before(async () => {
    verifier = await startSiteverify();
    verifications = verifier.verifications;
    stack = await startStack({ overrides: turnstileSettings(verifier) });
    stack.fake.script({ reply: "Noted: competitor monitoring.\nEXTRACTED_DATA: purpose=Monitor competitors\n" });
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    verifier?.close();
  });

  async function openChat() {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.route("https://challenges.cloudflare.com/**", (route) => route.fulfill({ status: 200, contentType: "text/javascript", body: FAKE_WIDGET }));
    await page.goto(`${stack.base}/#chat`);
    await page.waitForSelector("#chat-input:not([disabled])");
    await page.fill("#chat-input", "Monitor competitors");
    await page.press("#chat-input", "Enter");
    return { page, context, errors };
  }

  test("a new visitor solves the check once and the turn goes through", async () => {
    const before = stack.fake.requests.length;
    const { page, context, errors } = await openChat();
    await page.waitForSelector(".turnstile-dialog[open] #fake-turnstile");
    assert.match(await page.locator("#fake-turnstile").innerText(), /site key site-key-1/);
    assert.equal(stack.fake.requests.length, before, "nothing reached the model before the check");
    await page.click("#fake-turnstile");
    await page.waitForSelector('.steps li[aria-current="step"][data-step="business_goals"]', { timeout: 15000 });
    assert.equal(await page.locator(".turnstile-dialog").count(), 0, "the dialog is gone");
    assert.equal(stack.fake.requests.length - before, 1);
    assert.equal(verifications.at(-1).response, "good-token");
    // The identity is known now: the next turn asks nothing.
    await page.waitForSelector("#chat-input:not([disabled])");
    await page.fill("#chat-input", "Track launches");
    await page.press("#chat-input", "Enter");
    await page.waitForFunction((n) => document.querySelectorAll(".log .msg.user").length >= n, 2);
    assert.equal(await page.locator(".turnstile-dialog").count(), 0);
    for (let waited = 0; stack.fake.requests.length - before < 2 && waited < 15000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    assert.equal(stack.fake.requests.length - before, 2, "the second turn reached the model");
    await page.waitForSelector("#chat-input:not([disabled])");
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a visitor who cancels sees why the turn was not answered", async () => {
    const before = stack.fake.requests.length;
    const { page, context, errors } = await openChat();
    await page.waitForSelector(".turnstile-dialog[open]");
    await page.click(".turnstile-dialog button:has-text('Cancel')");
    await page.waitForSelector("text=challenge_required", { timeout: 15000 });
    assert.equal(stack.fake.requests.length, before, "no model call");
    assert.deepEqual(errors, []);
    await context.close();
  });
});

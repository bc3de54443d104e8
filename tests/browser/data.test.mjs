// Browser end-to-end test of the "Your data" page (issue 31): a person with a saved stream and a
// help session downloads everything as one JSON file, then erases it all behind a confirmation
// that stays shut until they type ERASE; afterwards the server holds nothing of theirs, the
// app's Streams page is empty, and the guided chat starts fresh.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { savedStream } from "../e2e/fixtures.mjs";
import { apiCaller, newOwner, startStack } from "../e2e/harness.mjs";

const SHOTS = new URL("./screenshots/", import.meta.url).pathname;
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

describe("the Your data page", () => {
  let stack;
  let browser;
  before(async () => {
    stack = await startStack();
    stack.fake.script({ reply: "An answer." });
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test("download everything, then erase it behind a typed confirmation", async () => {
    const owner = newOwner();
    const call = apiCaller(() => stack.base);
    const stream = await savedStream(call, owner);
    const help = await call("POST", "/api/help", { owner, body: { message: "How do I share a report?" } });
    assert.equal(help.status, 200, help.text);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    // The browser that made them: its owner token, and the help session it remembers.
    await context.addInitScript(([token, session]) => {
      localStorage.setItem("stepwise.owner.v1", token);
      localStorage.setItem("stepwise.help.session", session);
    }, [owner, help.json.session_id]);
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${stack.base}/#data`);
    await page.waitForSelector("#data-export");
    assert.equal(await page.getAttribute("#tab-data", "aria-current"), "page");
    assert.match(await page.locator(".data-page").innerText(), /anonymous: your data belongs to a token kept in this browser/);

    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#data-export")]);
    assert.match(download.suggestedFilename(), /^stepwise-export-\d{4}-\d{2}-\d{2}\.json$/);
    const exported = JSON.parse(readFileSync(await download.path(), "utf8"));
    assert.equal(exported.complete, true);
    assert.deepEqual(exported.streams.items.map((s) => s.id), [stream.id]);
    assert.equal(exported.guided_conversations.items.length, 1);
    assert.equal(exported.help_sessions.items.length, 1);
    await page.waitForSelector("text=/Downloaded \\d+ items/");
    await page.screenshot({ path: `${SHOTS}data-page.png` });

    // The confirmation stays shut until ERASE is typed; Cancel erases nothing.
    await page.click("#data-erase");
    await page.waitForSelector("dialog[open] #erase-confirm");
    const go = page.locator("dialog[open] button.danger-fill");
    assert.equal(await go.isDisabled(), true);
    await page.fill("#erase-confirm", "erase");
    assert.equal(await go.isDisabled(), true, "only the exact word opens it");
    await page.click("dialog[open] button.secondary");
    assert.equal((await call("GET", `/api/streams/${stream.id}`, { owner })).status, 200, "Cancel erased nothing");

    await page.click("#data-erase");
    await page.fill("#erase-confirm", "ERASE");
    await page.screenshot({ path: `${SHOTS}data-erase-confirm.png` });
    await go.click();
    await page.waitForSelector("text=/Everything of yours is erased from the server/");
    assert.equal((await call("GET", `/api/streams/${stream.id}`, { owner })).status, 404);
    assert.equal((await call("GET", `/api/help/sessions/${help.json.session_id}`, { owner })).status, 404);
    const left = await call("GET", "/api/me/export", { owner });
    for (const name of ["research", "streams", "assistant_conversations", "guided_conversations", "help_sessions"]) {
      assert.deepEqual(left.json[name].items, [], name);
    }
    assert.equal(await page.evaluate(() => localStorage.getItem("stepwise.help.session")), null, "the browser forgot its help session");

    await page.click("#tab-streams");
    await page.waitForSelector("text=No saved streams yet.");
    assert.deepEqual(errors, []);
    await context.close();
  });
});

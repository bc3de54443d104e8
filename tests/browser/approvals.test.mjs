// Browser end-to-end test of tool approval: playwright-core drives /usr/bin/chromium against
// `wrangler dev` with only the offline provider. Asking the assistant to apply a settings change
// shows an approval card in both tabs of the owner; Edit changes the arguments, Approve runs
// them once and the Settings tab shows the change in both tabs; the card says what happened
// after a reload. Starting research shows its cost; Deny with a reason keeps it denied after a
// reload, and no job is made; approving it puts the job in the Research page's list.
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
    providers: () => [{ name: "offline", kind: "offline" }],
    overrides: { LLM_PROVIDER: "offline" },
  });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Asks the tray `message`; its answer once whole. */
async function ask(page, message) {
  const n = await page.locator(".tray-log .msg.assistant").count();
  await page.fill("#assistant-input", message);
  await page.press("#assistant-input", "Enter");
  await page.waitForFunction((n) => document.querySelectorAll(".tray-log .msg.assistant:not([aria-busy])").length > n, n, { timeout: 20000 });
  return page.locator(".tray-log .msg.assistant").last();
}

const card = (page) => page.locator(".tray-log .approval-card").last();

describe("approval cards", () => {
  test("a settings change waits in both tabs, is approved with edits once, and shows everywhere", async () => {
    const owner = newOwner();
    const stream = await savedStream(call, owner);
    const { page, context, errors } = await ownerTab(browser, stack.base, owner, `/#streams/${stream.id}/settings`);
    await page.waitForSelector("[data-field=keywords]");
    const answer = await ask(page, "Apply: add keyword amivantamab");
    const pending = answer.locator(".approval-card[data-state=pending]");
    await pending.waitFor();
    assert.match(await pending.innerText(), /Change the settings of stream .*keywords to \[EGFR, osimertinib, amivantamab\]/);
    assert.doesNotMatch(await page.locator("[data-field=keywords]").innerText(), /amivantamab/, "nothing changed yet");
    // A second tab of the owner shows the same card, live.
    const other = await context.newPage();
    const otherErrors = [];
    other.on("pageerror", (error) => otherErrors.push(error.message));
    await other.goto(`${stack.base}/#streams/${stream.id}/settings`);
    if ((await other.getAttribute(".tray-toggle", "aria-expanded")) !== "true") await other.click(".tray-toggle");
    await card(other).locator("[data-decision=approve]").waitFor();
    // Edit: the arguments as JSON; invalid JSON is refused on the card.
    await pending.locator("[data-decision=edit]").click();
    const editor = pending.locator(".approval-arguments");
    await editor.fill("{ not json");
    await pending.locator("button:has-text('Approve edited')").click();
    await pending.locator(".card-status[data-kind=error]", { hasText: "not valid JSON" }).waitFor();
    assert.equal(await pending.getAttribute("data-state"), "pending", "still waiting");
    await editor.fill(JSON.stringify({ stream_id: stream.id, edits: [{ field: "keywords", value: ["EGFR", "osimertinib", "lazertinib"] }] }));
    await pending.locator("button:has-text('Approve edited')").click();
    await page.locator(".tray-log .msg.user.action", { hasText: "Approved with edits" }).waitFor();
    await page.locator(".approval-card[data-state=approved] .approval-result").waitFor({ timeout: 20000 });
    assert.match(await card(page).innerText(), /Approved with edits at .*Updated stream/s);
    // The page shows the change, in both tabs; the other tab's card says approved too.
    await page.locator("[data-field=keywords]", { hasText: "lazertinib" }).waitFor();
    await card(other).locator(".approval-result").waitFor({ timeout: 20000 });
    await other.locator("[data-field=keywords]", { hasText: "lazertinib" }).waitFor();
    assert.equal(await other.locator(".approval-card button[data-decision]").count(), 0, "nothing left to decide");
    // After a reload: as it was left.
    await other.reload();
    await card(other).locator(".approval-outcome", { hasText: "Approved with edits" }).waitFor();
    const stored = (await call("GET", `/api/streams/${stream.id}`, { owner })).json;
    assert.deepEqual(stored.config.keywords, ["EGFR", "osimertinib", "lazertinib"]);
    assert.deepEqual([...errors, ...otherErrors], []);
    await context.close();
  });

  test("starting research shows its cost; Deny keeps it denied, Approve puts the job in the list", async () => {
    const owner = newOwner();
    const { page, context, errors } = await ownerTab(browser, stack.base, owner, "/#research");
    await page.waitForSelector("#new-research");
    const first = await ask(page, "Start research on heat pumps in old houses");
    const pending = first.locator(".approval-card[data-state=pending]");
    await pending.waitFor();
    assert.match(await pending.innerText(), /Start a research job on "heat pumps in old houses" with 1 provider \(offline\): about 2 model calls\.\s+Waits for you until/);
    await pending.locator("[data-decision=deny]").click();
    await pending.locator(".approval-reason").fill("Not this week");
    await pending.locator(".approval-deny button:has-text('Deny')").click();
    await first.locator(".approval-card[data-state=denied] .approval-outcome", { hasText: "Not this week" }).waitFor();
    assert.equal((await first.locator(".approval-card .card-status").innerText()).trim(), "", "nothing is said to be in progress");
    await page.reload();
    await card(page).locator(".approval-outcome", { hasText: "Denied at" }).waitFor();
    assert.equal((await call("GET", "/api/research?limit=5", { owner })).json.items.length, 0);
    // Asked again and approved: the job appears in the list.
    if ((await page.getAttribute(".tray-toggle", "aria-expanded")) !== "true") await page.click(".tray-toggle");
    const second = await ask(page, "Start research on heat pumps in old houses");
    await second.locator(".approval-card[data-state=pending] [data-decision=approve]").click();
    await page.locator(".approval-card[data-state=approved] .approval-result").waitFor({ timeout: 20000 });
    await page.locator(".research-layout [data-id]").first().waitFor({ timeout: 20000 });
    const { items } = (await call("GET", "/api/research?limit=5", { owner })).json;
    assert.equal(items.length, 1);
    // The answer offers to open the job it started.
    await page.locator(".tray-log .msg.assistant").last().locator("[data-action=open_research]", { hasText: "Open the research" }).click();
    await page.waitForFunction((id) => location.hash === `#research/${id}`, items[0].id);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

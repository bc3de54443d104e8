// Browser end-to-end test of what the assistant sees (chat-architecture.md's first principle:
// everything dynamic on screen): playwright-core drives /usr/bin/chromium against `wrangler dev`
// with a fake model that records its prompts. On the Research page the unsaved new-research form
// and each job's per-provider states reach the model; on a stream's Settings tab the field being
// edited and the typed, unsaved instructions; on the Streams page the saved streams; on the Help
// page the help session's state, its pending clarifying question and its latest messages. A
// writing style chosen in the tray words the prompt, and is kept after a reload.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { savedStream } from "../e2e/fixtures.mjs";
import { apiCaller, fakeProvider, newOwner, startStack } from "../e2e/harness.mjs";
import { CHROMIUM_ARGS, ownerTab } from "./tabs.mjs";

let stack;
let browser;

before(async () => {
  stack = await startStack({
    providers: (url) => [fakeProvider(url, "fake-openai", "openai"), { name: "offline", kind: "offline" }],
    overrides: { LLM_PROVIDER: "fake-openai" },
  });
  stack.fake.script({ reply: "Seen." });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Asks the tray `message`; the system prompt the model got. */
async function promptOf(page, message) {
  const answers = await page.locator(".tray-log .msg.assistant").count();
  const since = Date.now();
  if ((await page.getAttribute(".tray-toggle", "aria-expanded")) !== "true") await page.click(".tray-toggle");
  await page.fill("#assistant-input", message);
  await page.press("#assistant-input", "Enter");
  await page.waitForFunction((n) => document.querySelectorAll(".tray-log .msg.assistant:not([aria-busy])").length > n, answers, { timeout: 20000 });
  const call = stack.fake.requests.filter((r) => r.at >= since && r.system?.includes("Stepwise assistant")).at(-1);
  assert.ok(call, "the model was called");
  return call.system;
}

describe("what the assistant sees", () => {
  test("the research form, each provider's state, unsaved settings, the streams list and the help desk reach the model", async () => {
    const owner = newOwner();
    const call = apiCaller(() => stack.base);
    const stream = await savedStream(call, owner);
    const draft = await call("POST", "/api/research/draft", { owner, body: { prompt: "Compare EGFR inhibitors", selected_llms: ["fake-openai", "offline"], synthesis_llm: "offline" } });
    assert.equal(draft.status, 201, draft.text);

    const { page, context, errors } = await ownerTab(browser, stack.base, owner, "/#research");
    await page.waitForSelector("#new-prompt");
    await page.locator(".card").first().waitFor();
    await page.fill("#new-prompt", "Which third-generation inhibitor has the best CNS penetration?");
    await page.uncheck("input[name=provider][value=offline]");
    let system = await promptOf(page, "Is my question well put?");
    assert.match(system, /The new-research form, not saved yet: \{"prompt":"Which third-generation inhibitor has the best CNS penetration\?","providers":\["fake-openai"\],"synthesis_provider":"[^"]+"\}/);
    assert.ok(!/They are viewing research job/.test(system), "no job is in view until one is opened");
    assert.match(system, new RegExp(`"id":"${draft.json.id}"[^\\n]*"status":"draft"`));

    await page.goto(`${stack.base}/#streams/${stream.id}/settings`);
    await page.waitForSelector("#stream-instructions");
    await page.fill("#stream-instructions", "Prefer phase 3 trials.");
    // Opening a field to edit keeps what was typed in the instructions.
    await page.click(`button[aria-label="Edit keywords"]`);
    await page.fill("dd input[aria-label=keywords]", "EGFR, osimertinib, C797S");
    assert.equal(await page.inputValue("#stream-instructions"), "Prefer phase 3 trials.");
    system = await promptOf(page, "Does this look right?");
    assert.match(system, /Field being edited: "keywords"\./);
    assert.match(system, /Typed but not saved: \{"chat_instructions":"Prefer phase 3 trials\.","keywords":"EGFR, osimertinib, C797S"\}\./);
    assert.match(system, new RegExp(`saved_streams: \\[\\{"id":"${stream.id}","name":"[^"]+"\\}\\]`));

    await page.goto(`${stack.base}/#help`);
    await page.waitForSelector("#help-input");
    await page.fill("#help-input", "How do I share a research job?");
    await page.press("#help-input", "Enter");
    await page.locator(".help-log .msg.assistant").first().waitFor({ timeout: 20000 });
    system = await promptOf(page, "What did the help desk say?");
    assert.match(system, /The user is on the Help page, talking with the help desk/);
    assert.match(system, /The help session is "(open|escalated|resolved)"\./);
    assert.match(system, /The latest messages there: \[\{"role":"user","text":"How do I share a research job\?"\}/);

    // A writing style chosen in the tray words the answer, and the conversation keeps it.
    assert.ok(!system.includes("Write for a busy executive"));
    await page.selectOption(".tray-style", "executive");
    system = await promptOf(page, "Summarize where I am");
    assert.match(system, /Write for a busy executive: the conclusion first/);
    await page.reload();
    await page.waitForFunction(() => document.querySelector(".tray-style")?.value === "executive", null, { timeout: 15000 });
    system = await promptOf(page, "And now?");
    assert.match(system, /Write for a busy executive/);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

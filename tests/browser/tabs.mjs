// Tabs for the browser tests: Chromium's flags, the stack with the fake provider as its model and
// Chromium started together, a tab of a given owner (its token put in localStorage before the app
// loads) with the assistant tray open, and a tab whose live connection a test can cut.
import { chromium } from "playwright-core";
import { fakeProvider, startStack } from "../e2e/harness.mjs";

/** Chromium's flags: headless, offline, no first-run work. */
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

/** The stack, its model the fake provider speaking OpenAI's wire, and Chromium. */
export async function stackWithFakeModel() {
  const stack = await startStack({ providers: (url) => [fakeProvider(url, "fake-openai", "openai")], overrides: { LLM_PROVIDER: "fake-openai" } });
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  return { stack, browser };
}

/** A wide tab of `owner` at `base + path`, the tray open; page errors are collected in `errors`. */
export async function ownerTab(browser, base, owner, path) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript((token) => localStorage.setItem("stepwise.owner.v1", token), owner);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(base + path);
  // The tray opens by itself where it was left open (wide screens).
  await page.waitForSelector(".tray-toggle");
  if ((await page.getAttribute(".tray-toggle", "aria-expanded")) !== "true") await page.click(".tray-toggle");
  return { page, context, errors };
}

/** Routes `page`'s conversation WebSockets so that a test can cut the open one (`cut`: the page's
 * end is closed, and every new one is refused) and let them through again (`restore`). Call before
 * the page opens its socket. */
export async function cuttableSocket(page) {
  let down = false;
  let current = null;
  await page.routeWebSocket(/\/ws$/, (ws) => (down ? ws.close() : ((current = ws), ws.connectToServer())));
  return {
    async cut() {
      down = true;
      await current?.close();
    },
    restore() {
      down = false;
    },
  };
}

// Tabs for the browser tests: Chromium's flags, and a tab of a given owner (its token put in
// localStorage before the app loads) with the assistant tray open.

/** Chromium's flags: headless, offline, no first-run work. */
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

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

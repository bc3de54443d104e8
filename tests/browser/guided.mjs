// Shared by the guided chat's browser tests (guided-live, guided-reload): the paced answer, the
// chat pages they open, and the waits on the chat's log.

export const LINES = 30;
export const REPLY = Array.from({ length: LINES }, (_, i) => `Line ${i + 1} of the paced answer.`).join("\n");

export const answers = (page) => page.locator(".chat-layout .log .msg.assistant");
export const linesOf = (text) => (text ?? "").split("\n").filter(Boolean).length;
/** Types `text` into the chat's box and sends it. */
export async function say(page, text) {
  await page.fill("#chat-input", text);
  await page.press("#chat-input", "Enter");
}
/** Resolves once the newest answer shows `n` lines. */
export const whenLines = (page, n) =>
  page.waitForFunction((n) => {
    const all = document.querySelectorAll(".chat-layout .log .msg.assistant");
    return (all[all.length - 1]?.textContent ?? "").split("\n").filter(Boolean).length >= n;
  }, n, { timeout: 20000 });
/** Resolves once no answer is being written and the box takes a message. */
export const whenIdle = (page) => page.waitForFunction(() => !document.querySelector(".chat-layout .log .msg.assistant[aria-busy]") && !document.querySelector("#chat-input")?.disabled, null, { timeout: 30000 });

/** The chat pages of a test file whose `stack` and `browser` (`current()`) are started by it. */
export function guidedPages(current) {
  /** The guided chat's answers are REPLY, paced; the tray's are short. */
  const pacedModel = () =>
    current().stack.fake.script((request) => (request.system?.includes("Stepwise assistant") ? { reply: "Other." } : { reply: REPLY, paced: true, delayMs: 100 }));

  /** A chat page, its answers paced. */
  async function chatPage() {
    pacedModel();
    const context = await current().browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(current().stack.base + "/#chat");
    return { context, page, errors };
  }

  /** A chat page whose first answer shows `lines` lines so far. */
  async function answering(lines = 3) {
    const opened = await chatPage();
    await say(opened.page, "Track rivals");
    await whenLines(opened.page, lines);
    return opened;
  }

  return { pacedModel, chatPage, answering };
}

//! The messages that wait at the server behind the running turn of the conversation shown (the
//! assistant tray's, the Help page's), as its live connection says (`conversation:waiting`,
//! `help:waiting`): listed above the box, first to be answered first. Those this tab sent (kept
//! for the tab, so a reload still knows them) have a Stop that withdraws the message while it
//! still waits and puts it back into the box; those of other tabs are listed only (their own tab
//! withdraws them, and gets them back there). The message whose stream this tab reads shows in
//! its log already and is left out here.
import { CONNECTION_LOST } from "./api.js";
import { h, replace } from "./dom.js";
import { giveBack } from "./queued.js";
import { tabKey } from "./tab.js";

/** A waiting message as the server lists it. */
export interface Waiting {
  id: string;
  content: string;
  /** An action or an approved call: withdrawn, its button is pressed again. */
  action?: boolean;
}

/** Most characters of a message the line shows (its first line); all of it goes back. */
const PREVIEW_CHARS = 120;
/** Wait before a withdrawal that got no answer is sent again, in ms. */
const RETRY_MS = 500;
/** Most ids of its own waiting messages a tab keeps. */
const KEPT_IDS = 8;

export class WaitingLine {
  readonly root = h("div", { class: "waiting-line", hidden: true, role: "status", "aria-label": "Messages waiting to be answered" });
  private readonly notice = h("p", { class: "error", hidden: true });
  private messages: Waiting[] = [];
  /** This tab's own messages that left the line lately (their answer began, or could not). */
  private readonly left = new Map<string, Waiting>();
  /** Ids of the messages this tab read on its own stream (which tells of their end itself). */
  private readonly streamed = new Set<string>();
  /** Ids of messages put back into the box while they may still wait (a Stop got no answer):
   * not given back a second time. */
  private readonly givenBack = new Set<string>();
  /** The message whose stream this tab reads (shown in its log), left out. */
  private reading: string | null = null;
  /** Ids of this tab's own messages listed so far in the conversation shown (the others are kept
   * until they are). */
  private readonly listed = new Set<string>();
  /** Counts the conversations shown: a Stop's answer for one no longer shown is dropped. */
  private generation = 0;
  private readonly key: string;

  /** `withdraw(id)`: asks the server to take the message waiting as `id` out of the line
   * (whether it did); `box`: where a withdrawn message goes back (it takes the focus after a
   * Stop); `key`: where the tab keeps the ids of its own waiting messages (for itself, not for
   * a duplicate of it: `tabKey`). */
  constructor(private readonly withdraw: (id: string) => Promise<boolean>, private readonly box: HTMLTextAreaElement, key: string) {
    this.key = tabKey(key);
    // A note of the last Stop stays until the next one, a keystroke in the box, or another
    // conversation (it may come just before the line that it explains, or just after).
    box.addEventListener("input", () => !this.notice.hidden && ((this.notice.hidden = true), this.render()));
  }

  /** The line as the server says it is now (an event's `messages`, checked). */
  show(messages: unknown): void {
    const before = this.messages;
    this.messages = Array.isArray(messages) ? messages.filter((m): m is Waiting => typeof m?.id === "string" && typeof m?.content === "string").map((m) => ({ id: m.id, content: m.content, action: m.action === true })) : [];
    // An own message listed before and gone now has left the line for good (begun, or not
    // begun: `notBegun` may follow).
    const now = new Set(this.messages.map((m) => m.id));
    const wasOwn = new Set(this.own());
    for (const m of before) if (!now.has(m.id) && wasOwn.has(m.id)) this.left.set(m.id, m);
    for (const id of [...this.left.keys()].slice(0, Math.max(0, this.left.size - KEPT_IDS))) this.left.delete(id);
    const own = this.own().filter((id) => now.has(id) || !this.listed.has(id));
    for (const id of own) if (now.has(id)) this.listed.add(id);
    this.keep(own);
    this.render();
  }

  /** The message this tab's stream waits as (`null`: none): one of its own. */
  ownIs(id: string | null): void {
    if (id) this.streamed.add(id);
    if (id && !this.own().includes(id)) this.keep([...this.own(), id].slice(-KEPT_IDS));
    if (this.reading === id) return;
    this.reading = id;
    this.render();
  }

  /** The message waiting as `id` (`content`) could not begin (`why`): one this tab sent and no
   * longer reads on its own stream (it was reloaded since) goes back into the box, and why
   * shows. The stream that still reads it says so itself. */
  notBegun(id: string, why: string, content: string): void {
    const message = this.ownLeft(id, content);
    if (!message || this.streamed.has(id) || this.givenBack.has(id)) return;
    this.left.delete(id);
    const preview = message.content.slice(0, PREVIEW_CHARS);
    if (!message.action) giveBack(this.box, message.content);
    const said = /[.!?]$/.test(why) ? why : `${why}.`;
    this.notice.textContent = `"${preview}" was not answered: ${said} ${message.action ? "Press its button again to ask for it." : "It is back in the box."}`;
    this.notice.hidden = false;
    this.render();
  }

  /** This tab's stream of the message waiting as `id` was lost: the live connection tells of
   * its turn from now on (`began`, `notBegun`). */
  streamLost(id: string): void {
    this.streamed.delete(id);
  }

  /** The turn of the message that waited as `id` (`content`) began: the message, when this tab
   * sent it and no longer reads it on its own stream (it was reloaded since), for the caller to
   * give back if that turn fails; else `null`. */
  began(id: string, content: string): Waiting | null {
    const message = this.ownLeft(id, content);
    if (!message || this.streamed.has(id) || this.givenBack.has(id)) return null;
    this.left.delete(id);
    return message;
  }

  /** This tab's own message `id` that left the line: as listed, or (a reload came as it left,
   * so it was never listed here) as the server names it now. */
  private ownLeft(id: string, content: string): Waiting | undefined {
    const own = this.own();
    if (!own.includes(id)) return this.left.get(id);
    this.keep(own.filter((kept) => kept !== id));
    return this.left.get(id) ?? { id, content };
  }

  /** Another conversation is shown: its line comes with its connection. */
  clear(): void {
    this.left.clear();
    this.streamed.clear();
    this.givenBack.clear();
    this.messages = [];
    this.reading = null;
    this.listed.clear();
    this.generation++;
    this.notice.hidden = true;
    this.render();
  }

  private own(): string[] {
    try {
      const ids = JSON.parse(sessionStorage.getItem(this.key) ?? "[]");
      return Array.isArray(ids) ? ids.filter((id) => typeof id === "string") : [];
    } catch {
      return [];
    }
  }

  private keep(ids: string[]): void {
    if (ids.length) sessionStorage.setItem(this.key, JSON.stringify(ids));
    else sessionStorage.removeItem(this.key);
  }

  private render(): void {
    const shown = this.messages.filter((m) => m.id !== this.reading);
    const own = new Set(this.own());
    this.root.hidden = shown.length === 0 && this.notice.hidden;
    const title = shown.length === 1 ? "Waiting to be answered next:" : "Waiting to be answered, in this order:";
    replace(this.root, ...(shown.length ? [h("p", { class: "muted" }, title)] : []), ...shown.map((m) => this.item(m, own.has(m.id))), this.notice);
  }

  private item(message: Waiting, own: boolean): HTMLElement {
    const firstLine = message.content.split("\n", 1)[0];
    const preview = firstLine.length > PREVIEW_CHARS || firstLine.length < message.content.length ? `${firstLine.slice(0, PREVIEW_CHARS)}…` : firstLine;
    const text = h("span", { class: "waiting-text", title: message.content }, preview);
    if (!own) return h("div", { class: "waiting-item" }, text, h("span", { class: "muted" }, " (sent in another tab)"));
    const stop = h("button", { class: "btn link", type: "button", "aria-label": `Stop "${preview}" and put it back into the box` }, "Stop");
    stop.onclick = () => void this.stop(message, stop);
    return h("div", { class: "waiting-item" }, text, " ", stop);
  }

  private async stop(message: Waiting, button: HTMLButtonElement): Promise<void> {
    const generation = this.generation;
    button.disabled = true;
    this.notice.hidden = true;
    let note = "";
    let withdrawn: boolean | null = null;
    // A withdrawal sent again answers the same (the server remembers it): one whose answer was
    // lost is asked once more before anything is said. A refusal (an error status) is final.
    for (let attempt = 0; attempt < 2 && withdrawn === null && !note; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      if (generation !== this.generation) return;
      withdrawn = await this.withdraw(message.id).catch((error: Error) => ((note = error.message === CONNECTION_LOST ? "" : error.message), null));
      if (!navigator.onLine) break;
    }
    // Another conversation is shown now: its line is not this one.
    if (generation !== this.generation) return;
    if (withdrawn) note = this.giveBack(message);
    else if (withdrawn === false) note = "Its answer has begun: it is no longer waiting (Stop beside Send stops the answer).";
    else if (note) note = `Not withdrawn: ${note}`;
    else if (!navigator.onLine) note = `${CONNECTION_LOST} Stop was not sent: the message still waits.`;
    else if (message.action) note = "Stop got no answer: the line shows whether it still waits.";
    else {
      // It may have been withdrawn with both answers lost: it comes back rather than be lost, and
      // the line (told again when the connection is back) shows whether it still waits.
      giveBack(this.box, message.content);
      this.givenBack.add(message.id);
      note = "Stop got no answer: the message is back in the box, and is still answered if it is listed here.";
    }
    button.disabled = false;
    this.notice.textContent = note;
    this.notice.hidden = !note;
    this.render();
    // The item pressed has left the line (or is drawn anew): the box, not the page, keeps focus.
    this.box.focus();
  }

  /** A withdrawn message: back into the box (an action's button is pressed again instead), out
   * of the line until the server's new line; what to say of it. */
  private giveBack(message: Waiting): string {
    this.messages = this.messages.filter((m) => m.id !== message.id);
    if (message.action) return `"${message.content.slice(0, PREVIEW_CHARS)}" was withdrawn: press its button again to ask for it.`;
    giveBack(this.box, message.content);
    return "";
  }
}

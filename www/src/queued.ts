//! The one message typed while an answer is written (the guided chat's, the Help page's, the
//! assistant tray's): shown as queued in the log and sent when the answer ends. This tab keeps it
//! (sessionStorage, under the page's `key`) until then, so a reload, or a page left and shown
//! again, puts it back into the box unsent: never lost, never sent twice. What a box holds when the
//! page goes away (a draft, a message given back) is kept for the tab the same way (`keepDraft`).
import { h } from "./dom.js";
import { tabKey } from "./tab.js";

export class QueuedMessage {
  private held: { message: string; bubble: HTMLElement } | null = null;

  private readonly key: string;

  /** A message kept under `key` for this tab (not for a duplicate of it). */
  constructor(key: string) {
    this.key = tabKey(key);
  }

  /** What a reload (or a page left meanwhile) kept of a queued message: for the box, once. */
  restored(): string | null {
    const message = sessionStorage.getItem(this.key);
    sessionStorage.removeItem(this.key);
    return message;
  }

  /** Whether a message waits. */
  get waiting(): boolean {
    return this.held !== null;
  }

  /** Shows `message` at the end of `log` as queued, and keeps it for this tab: its bubble. */
  hold(message: string, log: HTMLElement): HTMLElement {
    const bubble = h("div", { class: "msg user queued" }, message, h("span", { class: "msg-status" }, " (queued)"));
    log.append(bubble);
    this.held = { message, bubble };
    sessionStorage.setItem(this.key, message);
    return bubble;
  }

  /** Shows the waiting message's bubble again at the end of `log` (drawn anew meanwhile). */
  showIn(log: HTMLElement): void {
    if (this.held) log.append(this.held.bubble);
  }

  /** The waiting message, out of the log and out of this tab's keeping (to send, or give back). */
  take(): string | null {
    const held = this.held;
    this.held = null;
    if (!held) return null;
    sessionStorage.removeItem(this.key);
    held.bubble.remove();
    return held.message;
  }

  /** The page is left: it is not sent from here; the tab keeps it for the next page's box. */
  leave(): void {
    this.held = null;
  }
}

/** Puts `message` (given back: refused, failed, stopped, or never sent) into `box` beside what is
 * there, never instead of it (on a new line of a text area, after a space in a one-line input). */
export function giveBack(box: HTMLTextAreaElement | HTMLInputElement, message: string | null): void {
  if (message) box.value = [box.value.trim(), message].filter(Boolean).join(box instanceof HTMLTextAreaElement ? "\n" : " ");
}

/** The boxes whose text is kept across a reload, by where it is kept. */
const drafts = new Map<string, HTMLTextAreaElement | HTMLInputElement>();

/** Keeps what `box` holds when the page goes away (a reload, a navigation) for this tab, under
 * `key`, and puts what was kept there before back into it now (beside what it holds): a draft, or
 * a message given back (refused, failed, withdrawn), is never lost by a reload. */
export function keepDraft(box: HTMLTextAreaElement | HTMLInputElement, key: string): void {
  giveBack(box, sessionStorage.getItem(key));
  sessionStorage.removeItem(key);
  if (drafts.size === 0) {
    addEventListener("pagehide", () => {
      for (const [kept, shown] of drafts) {
        // A box no longer on the page (one the app left) has nothing to keep.
        if (shown.isConnected && shown.value.trim()) sessionStorage.setItem(kept, shown.value);
        else sessionStorage.removeItem(kept);
      }
    });
    // A page shown again from the back/forward cache still holds its boxes: nothing to put back
    // later (what was kept could otherwise come back after it was sent).
    addEventListener("pageshow", (event) => {
      if (event.persisted) for (const kept of drafts.keys()) sessionStorage.removeItem(kept);
    });
  }
  drafts.set(key, box);
}

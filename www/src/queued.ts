//! The one message typed while an answer is written (the guided chat's, the Help page's, the
//! assistant tray's): shown as queued in the log and sent when the answer ends. This tab keeps it
//! (sessionStorage, under the page's `key`) until then, so a reload, or a page left and shown
//! again, puts it back into the box unsent: never lost, never sent twice.
import { h } from "./dom.js";

export class QueuedMessage {
  private held: { message: string; bubble: HTMLElement } | null = null;

  constructor(private readonly key: string) {}

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

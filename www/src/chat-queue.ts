//! The guided chat's one message typed while its own answer streams: shown as queued in the log
//! and sent when the answer ends. This tab keeps it (sessionStorage) until then, so a reload, or
//! a page left and shown again, puts it back into the box unsent: never lost, never sent twice.
import { h } from "./dom.js";

const QUEUED_KEY = "stepwise.chat.queued.v1";

export class QueuedMessage {
  private held: { message: string; bubble: HTMLElement } | null = null;

  /** What a reload (or a page left meanwhile) kept of a queued message: for the box, once. */
  static restored(): string | null {
    const message = sessionStorage.getItem(QUEUED_KEY);
    sessionStorage.removeItem(QUEUED_KEY);
    return message;
  }

  /** Whether a message waits. */
  get waiting(): boolean {
    return this.held !== null;
  }

  /** Shows `message` at the end of `log` as queued, and keeps it for this tab. */
  hold(message: string, log: HTMLElement): void {
    const bubble = h("div", { class: "msg user queued" }, message, h("span", { class: "msg-status" }, " (queued)"));
    log.append(bubble);
    log.scrollTop = log.scrollHeight;
    this.held = { message, bubble };
    sessionStorage.setItem(QUEUED_KEY, message);
  }

  /** The waiting message, out of the log and out of this tab's keeping (to send, or give back). */
  take(): string | null {
    const held = this.held;
    this.held = null;
    if (!held) return null;
    sessionStorage.removeItem(QUEUED_KEY);
    held.bubble.remove();
    return held.message;
  }

  /** The page is left: it is not sent from here; the tab keeps it for the next chat page's box. */
  leave(): void {
    this.held = null;
  }

  /** Dropped (the conversation starts over). */
  drop(): void {
    this.held = null;
    sessionStorage.removeItem(QUEUED_KEY);
  }
}

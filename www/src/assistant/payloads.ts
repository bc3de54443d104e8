//! The payload handler registry (chat-architecture.md §3): a payload type's name maps to how its
//! card renders and what Accept does on the page. Types without a handler are shown as plain
//! data, never dropped silently.

import type { Page } from "../page.js";

/** What a card's buttons call. */
export interface PayloadCallbacks {
  /** Applies the payload (the handler's `accept`), then marks the card accepted. */
  onAccept: () => Promise<void>;
  /** Sets the card aside. */
  onDismiss: () => void;
}

/** Where a card acts: the page on screen, and a way to open another one. */
export interface PayloadHost {
  /** The page on screen. */
  page(): Page;
  /** Opens the page at `hash` and returns it once shown. */
  go(hash: string): Promise<Page>;
}

/** How one payload type is shown and applied. */
export interface PayloadHandler<T = unknown> {
  /** The card: its content and, when `callbacks` are given (the type has `accept`), Accept and
   * Dismiss buttons. */
  render(data: T, callbacks?: PayloadCallbacks): HTMLElement;
  /** What Accept does; cards without it have no Accept button. */
  accept?(data: T, host: PayloadHost): Promise<void>;
}

const handlers = new Map<string, PayloadHandler>();

/** Registers the handler of payload type `type` (a later registration replaces an earlier one). */
export function registerPayloadHandler<T>(type: string, handler: PayloadHandler<T>): void {
  handlers.set(type, handler as PayloadHandler);
}

/** The handler of `type`, if any. */
export function payloadHandler(type: string): PayloadHandler | undefined {
  return handlers.get(type);
}

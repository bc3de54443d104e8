//! The tray's "Show earlier messages" button: a long conversation shows its newest page of
//! messages; the button above it reads the page before, puts it in its place (with a button for
//! the page before that, if any) and keeps what is in view where it is. A failed read says why
//! and leaves the button to try again.

import type { AssistantConversation } from "../../../crates/wasm/pkg/stepwise.js";
import { api } from "../api.js";
import { h } from "../dom.js";
import type { ContextRequestJson } from "./request.js";

/** Messages a page of a stored conversation shows at a time (the newest page first). */
export const PAGE_MESSAGES = 200;

/** What the button needs of the tray. */
export interface EarlierPages {
  /** The log the pages go into. */
  log: HTMLElement;
  /** Whether conversation `id` is still the one shown. */
  shows(id: string): boolean;
  /** The nodes of `messages`, the first at index `from` (`last`: the conversation's last
   * message's index), with the context requests they name. */
  render(messages: AssistantConversation["messages"], from: number, last: number, requests: ContextRequestJson[]): HTMLElement[];
  /** Conversation `id` now shows its messages from index `from`. */
  shownFrom(id: string, from: number): void;
}

/** The button that shows the page of messages before index `before` of conversation `id`
 * above the ones shown (`requests`: the context requests known so far). */
export function earlierButton(pages: EarlierPages, id: string, before: number, requests: ContextRequestJson[]): HTMLElement {
  const button = h("button", { class: "btn link earlier", type: "button", "data-action": "show-earlier" }, `Show earlier messages (${before.toLocaleString("en")})`);
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  button.onclick = async () => {
    button.disabled = true;
    failure.hidden = true;
    try {
      const page = await api<AssistantConversation>("GET", `/api/assistant/conversations/${id}?limit=${PAGE_MESSAGES}&before=${before}`);
      if (!pages.shows(id) || !button.isConnected) return;
      const height = pages.log.scrollHeight;
      // A page carries the requests its own messages name.
      const known = [...requests, ...((page.context_requests ?? []) as unknown as ContextRequestJson[])];
      const nodes = pages.render(page.messages, page.messages_from, page.message_count - 1, known);
      failure.remove();
      button.replaceWith(...(page.messages_from > 0 ? [earlierButton(pages, id, page.messages_from, known)] : []), ...nodes);
      pages.shownFrom(id, page.messages_from);
      pages.log.scrollTop += pages.log.scrollHeight - height;
    } catch (error) {
      failure.textContent = (error as Error).message;
      failure.hidden = false;
      if (!failure.isConnected) button.after(failure);
    } finally {
      button.disabled = false;
    }
  };
  return button;
}

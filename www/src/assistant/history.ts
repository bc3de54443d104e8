//! The tray's History: the owner's twenty latest assistant conversations, newest first, each a
//! button that shows it; "None yet." when there are none, and why when they cannot be read.
import type { ConversationSummary } from "../../../crates/wasm/pkg/stepwise.js";
import { api } from "../api.js";
import { h, replace } from "../dom.js";

/** Lists the conversations in `list`; `pick` shows one. */
export async function listConversations(list: HTMLElement, pick: (id: string) => void): Promise<void> {
  replace(list, h("p", { class: "muted" }, "Loading…"));
  try {
    const { items } = await api<{ items: ConversationSummary[] }>("GET", "/api/assistant/conversations?limit=20");
    const item = (c: ConversationSummary) =>
      h("li", {}, h("button", { class: "btn link", type: "button", onclick: () => pick(c.id) }, c.title || "(untitled)"), h("span", { class: "muted" }, ` ${new Date(c.updated_at).toLocaleString()}`));
    replace(list, h("h3", {}, "Past conversations"), items.length ? h("ul", {}, ...items.map(item)) : h("p", { class: "muted" }, "None yet."));
  } catch (error) {
    replace(list, h("p", { class: "error", role: "alert" }, (error as Error).message));
  }
}

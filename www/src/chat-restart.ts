//! The guided chat's "Start over?" dialog: it names what would be lost (each answer, the
//! conversation) and what is kept (a saved stream); Cancel keeps everything.

import type { Config, StepSpec } from "../../crates/wasm/pkg/stepwise.js";
import { label, shownValue } from "./chat-text.js";
import { h } from "./dom.js";

/** What the page holds: its answers, its count of messages, the saved stream's name. */
export interface Held {
  config: Config;
  skipped: string[];
  messages: number;
  /** The name of the stream the conversation was saved as, if it was. */
  saved: string | null;
}

/** Asks in a modal dialog over `root` whether to start over, naming what `held` would lose;
 * `erase` runs only when the user confirms. False (and nothing asked) when there is nothing
 * to lose. */
export function confirmRestart(root: HTMLElement, steps: StepSpec[], held: Held, erase: () => void): boolean {
  const answered = steps.filter((s) => s.field && (held.config[s.field] !== undefined || held.skipped.includes(s.field)));
  if (!answered.length && !held.messages) return false;
  const lost = h(
    "ul",
    {},
    ...answered.map((s) => {
      const field = s.field!;
      const value = held.skipped.includes(field) ? "skipped" : shownValue(held.config[field]);
      return h("li", {}, h("strong", {}, label(field)), `: ${value}`);
    }),
    held.messages ? h("li", {}, `the conversation so far (${held.messages} ${held.messages === 1 ? "message" : "messages"})`) : null,
  );
  const kept = held.saved !== null ? h("p", {}, `The saved stream “${held.saved}” is kept.`) : null;
  const dialog = h("dialog", { class: "confirm-dialog", "aria-labelledby": "restart-title", "aria-describedby": "restart-lost" });
  const close = () => dialog.close();
  dialog.append(
    h("h2", { id: "restart-title" }, "Start over?"),
    h("div", { id: "restart-lost" }, h("p", {}, "This erases your answers and the conversation:"), lost, kept),
    h(
      "div",
      { class: "actions" },
      h("button", { class: "btn secondary", type: "button", autofocus: true, onclick: close }, "Cancel"),
      h("button", { class: "btn danger-fill", type: "button", onclick: () => (close(), erase()) }, "Erase and start over"),
    ),
  );
  dialog.addEventListener("close", () => dialog.remove());
  root.append(dialog);
  dialog.showModal();
  return true;
}

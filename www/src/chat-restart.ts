//! The guided chat's "Start over?" dialog: it names what would be lost; Cancel keeps everything.

import { h } from "./dom.js";

/** Asks in a modal dialog over `root` whether to start over, showing `lost` (and `kept`, what
 * survives); `erase` runs only when the user confirms. */
export function confirmRestart(root: HTMLElement, lost: HTMLElement, kept: HTMLElement | null, erase: () => void): void {
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
}

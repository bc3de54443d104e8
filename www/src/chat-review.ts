//! What the guided chat shows at its end: the summary Confirm confirms, and a finished
//! configuration's actions (save it as a stream, or go to the stream it was saved as); and the
//! note under an answer that later edits left out of date.

import type { Config, StepSpec } from "../../crates/wasm/pkg/stepwise.js";
import { label, shownValue } from "./chat-text.js";
import { h } from "./dom.js";

/** What Confirm confirms: the configuration as it is now, pencil edits included (the model's
 * summary in the log was written before them). */
export function reviewSummary(steps: StepSpec[], config: Config, skipped: string[]): HTMLElement {
  const rows = steps.filter((s) => s.field).flatMap((step) => {
    const field = step.field!;
    const shown = shownValue(config[field]);
    return [h("dt", {}, label(field)), h("dd", {}, shown || h("span", { class: "muted" }, skipped.includes(field) ? "skipped" : "—"))];
  });
  return h("section", { class: "review-summary", "aria-labelledby": "review-summary-title" }, h("h3", { id: "review-summary-title" }, "You are confirming"), h("dl", {}, ...rows));
}

/** A finished configuration's controls: Save as a stream (once the conversation is stored), or,
 * once saved as `stream`, where its later changes belong. */
export function finishedControls(stream: { id: string; name?: string } | null, stored: boolean, save: () => void): HTMLElement[] {
  if (!stream) {
    const button = h("button", { class: "btn", type: "button", disabled: !stored, onclick: save }, "Save as a stream");
    return [h("p", { class: "done" }, "This configuration is complete."), h("div", { class: "actions" }, button)];
  }
  const name = stream.name ? `“${stream.name}”` : "a stream";
  return [
    h("div", { class: "saved-stream", role: "status" },
      h("p", { class: "done" }, `This configuration is complete and saved as ${name}.`),
      h("p", {}, "Changes now go to the stream, in its Settings; this conversation no longer changes it. Start over to configure another stream."),
      h("div", { class: "actions" }, h("a", { class: "btn", href: `#streams/${stream.id}/settings` }, "Edit the stream's settings"), h("a", { class: "btn secondary", href: `#streams/${stream.id}` }, "Open the stream"))),
  ];
}

/** The note under an answer that fields edited since left out of date (`config` now, `answered`
 * as the answer left it, at step `step`): which fields changed, and where their values show now;
 * `null` when none did. */
export function changedNote(steps: StepSpec[], step: string, config: Config, answered: Config): HTMLElement | null {
  const changed = steps
    .map((s) => s.field)
    .filter((field): field is string => !!field && JSON.stringify(config[field] ?? null) !== JSON.stringify(answered[field] ?? null));
  if (!changed.length) return null;
  const atReview = steps.find((s) => s.id === step)?.kind === "confirm";
  const current = atReview ? "the summary below shows the current values" : "the Configuration panel shows the current values";
  return h("p", { class: "log-note", role: "note" }, `Changed since this message: ${changed.map(label).join(", ")}; ${current}.`);
}

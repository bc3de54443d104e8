//! The guided chat's inline editor of one field (the Configuration panel's ✎): a select for a
//! single choice, else text (a list's items comma-separated); Save hands the new value on,
//! Cancel closes it.
import type { FieldValue, StepSpec } from "../../crates/wasm/pkg/stepwise.js";
import { label } from "./chat-text.js";
import { h } from "./dom.js";

/** The editor of `step`'s field, showing `value`. */
export function fieldEditor(step: StepSpec, value: FieldValue | undefined, save: (next: FieldValue) => Promise<void>, cancel: () => void): HTMLElement {
  const field = step.field!;
  const list = step.kind === "list" || step.kind === "multi_choice";
  const control =
    step.kind === "single_choice"
      ? h("select", { id: `edit-${field}`, "aria-label": label(field) }, ...(step.choices ?? []).map((c) => h("option", { value: c, selected: c === value }, c)))
      : h("input", { id: `edit-${field}`, "aria-label": label(field), value: Array.isArray(value) ? value.join(", ") : value ?? "" });
  const submit = async (e: Event) => {
    e.preventDefault();
    const raw = control.value.trim();
    await save(list ? raw.split(",").map((s) => s.trim()).filter(Boolean) : raw);
  };
  return h("form", { onsubmit: submit }, control, h("button", { class: "btn", type: "submit" }, "Save"), h("button", { class: "btn secondary", type: "button", onclick: cancel }, "Cancel"));
}

/** The field being edited and its open editor. The editor is kept across the panel's redraws (an
 * answer arriving, another tab's turn), so what was typed into it is not lost. */
export class OpenEditor {
  /** The field whose editor is open, if any. */
  field: string | null = null;
  private form: HTMLElement | null = null;

  /** Opens the editor of `field` (a new one). */
  open(field: string): void {
    [this.field, this.form] = [field, null];
  }

  /** Closes the editor, forgetting what was typed. */
  close(): void {
    [this.field, this.form] = [null, null];
  }

  /** The open editor of `step`'s field: the one shown already, else a new one showing `value`. */
  of(step: StepSpec, value: FieldValue | undefined, save: (next: FieldValue) => Promise<void>, cancel: () => void): HTMLElement {
    return (this.form ??= fieldEditor(step, value, save, cancel));
  }
}

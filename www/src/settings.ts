//! The Streams page's Settings tab: the stream's name, its configuration (each field edited with
//! the same validated field edits as the guided chat: checked locally by the wasm `Workflow`,
//! then by the server) and its chat instructions for the assistant. What is typed and not saved yet
//! is in the assistant context.

import type { ChatContext, FieldValue, SavedStream, StepSpec, StreamChange, UserAction, Workflow } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";
import { label, readableError } from "./chat-text.js";
import { h, replace } from "./dom.js";

/** The Settings tab of one stream. */
export class SettingsTab {
  readonly root = h("div", { class: "settings" });
  private readonly notice = h("div", { "aria-live": "assertive" });
  private editing: string | null = null;
  /** The controls whose values are not saved until their Save: name, instructions, the field
   * being edited. */
  private controls: { name?: HTMLInputElement; instructions?: HTMLTextAreaElement; field?: HTMLInputElement | HTMLSelectElement } = {};

  /** `changed` is told the stream after every saved change; `deleted` after a deletion. */
  constructor(
    private stream: SavedStream,
    private readonly workflow: Workflow,
    private readonly changed: (stream: SavedStream) => void,
    private readonly deleted: () => void,
  ) {
    this.render();
  }

  /** The tab's part of the assistant context: which field is being edited and every edit typed
   * but not saved (the stream as saved is the page's own part). */
  context(): Partial<ChatContext> {
    const unsaved: Record<string, unknown> = {};
    const { name, instructions, field } = this.controls;
    if (name && name.value !== this.stream.name) unsaved.name = name.value;
    if (instructions && instructions.value !== this.stream.chat_instructions) unsaved.chat_instructions = instructions.value;
    if (this.editing && field) unsaved[this.editing] = field.value;
    return { settings: { editing: this.editing, ...(Object.keys(unsaved).length ? { unsaved } : {}) } };
  }

  /** Applies a change (from this form or an accepted suggestion); the server validates it. */
  async apply(change: StreamChange): Promise<void> {
    this.stream = await api<SavedStream>("PUT", `/api/streams/${this.stream.id}`, change);
    this.editing = null;
    // What was saved shows as saved; what else was typed stays typed.
    if (change.name !== undefined) delete this.controls.name;
    if (change.chat_instructions !== undefined) delete this.controls.instructions;
    this.changed(this.stream);
    this.render();
    replace(this.notice, h("p", { class: "ok", role: "status" }, "Saved."));
  }

  private render(): void {
    // What was typed and not saved stays when the tab is drawn again (a field opened to edit).
    const typed = this.controls;
    const name = h("input", { id: "stream-name", value: typed.name?.value ?? this.stream.name, maxlength: 120, required: true });
    const instructions = h("textarea", { id: "stream-instructions", rows: 4, maxlength: 4000 }, typed.instructions?.value ?? this.stream.chat_instructions);
    const steps = this.workflow.steps().filter((s) => s.field);
    this.controls = { name, instructions };
    replace(
      this.root,
      this.notice,
      h("form", { class: "field-row", onsubmit: (e: Event) => (e.preventDefault(), void this.save({ name: name.value })) },
        h("div", { class: "field grow" }, h("label", { for: "stream-name" }, "Name"), name), h("button", { class: "btn", type: "submit" }, "Save name")),
      h("section", { class: "config panel", "aria-labelledby": "stream-config" }, h("h3", { id: "stream-config" }, "Configuration"), h("dl", {}, ...steps.flatMap((s) => this.row(s)))),
      h("form", { class: "panel", onsubmit: (e: Event) => (e.preventDefault(), void this.save({ chat_instructions: instructions.value })) },
        h("div", { class: "field" }, h("label", { for: "stream-instructions" }, "Chat instructions"), h("p", { class: "muted" }, "Added to the assistant's instructions whenever this stream is in view."), instructions),
        h("button", { class: "btn", type: "submit" }, "Save instructions")),
      h("div", { class: "actions" }, h("button", { class: "btn secondary danger", type: "button", onclick: () => this.remove() }, "Delete this stream")),
    );
  }

  /** One field: its value and an edit button, or its editor. */
  private row(step: StepSpec): HTMLElement[] {
    const field = step.field!;
    const value = this.stream.config[field];
    const title = label(field);
    if (this.editing === field) return [h("dt", {}, title), h("dd", {}, this.editor(step, value))];
    const shown = Array.isArray(value) ? value.join(", ") : value ?? "";
    const edit = h("button", { class: "btn link", type: "button", "aria-label": `Edit ${title}`, onclick: () => ((this.editing = field), this.render()) }, "✎");
    return [h("dt", {}, title, edit), h("dd", { "data-field": field }, shown || h("span", { class: "muted" }, "—"))];
  }

  private editor(step: StepSpec, value: FieldValue | undefined): HTMLElement {
    const field = step.field!;
    const list = step.kind === "list" || step.kind === "multi_choice";
    const control =
      step.kind === "single_choice"
        ? h("select", { "aria-label": label(field) }, ...(step.choices ?? []).map((c) => h("option", { value: c, selected: c === value }, c)))
        : h("input", { "aria-label": label(field), value: Array.isArray(value) ? value.join(", ") : value ?? "" });
    this.controls.field = control;
    const submit = (e: Event) => {
      e.preventDefault();
      const raw = control.value.trim();
      const next: FieldValue = list ? raw.split(",").map((s) => s.trim()).filter(Boolean) : raw;
      const action: UserAction = { type: "field_edit", target_field: field, value: next };
      const verdict = this.workflow.validateAction({ current_step: "done", config: this.stream.config, skipped: this.stream.skipped }, action);
      if (!verdict.ok) return replace(this.notice, h("p", { class: "error", role: "alert" }, `${readableError(this.workflow.steps(), verdict.error.message)} (${verdict.error.code})`));
      void this.save({ edits: [{ field, value: next }] });
    };
    return h("form", { onsubmit: submit }, control, h("button", { class: "btn", type: "submit" }, "Save"), h("button", { class: "btn secondary", type: "button", onclick: () => ((this.editing = null), this.render()) }, "Cancel"));
  }

  private async save(change: StreamChange): Promise<void> {
    try {
      await this.apply(change);
    } catch (error) {
      replace(this.notice, h("p", { class: "error", role: "alert" }, readableError(this.workflow.steps(), (error as Error).message)));
    }
  }

  private async remove(): Promise<void> {
    if (!confirm(`Delete the stream "${this.stream.name}"?`)) return;
    try {
      await api<null>("DELETE", `/api/streams/${this.stream.id}`);
      this.deleted();
    } catch (error) {
      replace(this.notice, h("p", { class: "error", role: "alert" }, (error as Error).message));
    }
  }
}

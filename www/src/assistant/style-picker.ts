//! The tray's writing-style picker: the styles the default prompt sheet offers (the server checks
//! each), the conversation's own shown when it is read, and what to send with a message: a style
//! chosen here (the default one too, once another was kept), else nothing, and the conversation
//! keeps its own.
import { api } from "../api.js";
import { h } from "../dom.js";

export class StylePicker {
  readonly select = h("select", { class: "tray-style", "aria-label": "Writing style", title: "Writing style" }, h("option", { value: "" }, "Default style"));
  private chosen = false;

  constructor() {
    this.select.addEventListener("change", () => (this.chosen = true));
  }

  /** Adds the styles the prompt sheet offers; none when it cannot be read. */
  async load(): Promise<void> {
    try {
      const { styles } = await api<{ styles: string[] }>("GET", "/api/prompt-sheets/default.question");
      const value = this.select.value;
      for (const style of styles.filter((s) => s !== "default")) this.select.append(h("option", { value: style }, style[0].toUpperCase() + style.slice(1)));
      this.select.value = value;
    } catch {
      // No choice offered: answers keep the sheet's default style.
    }
  }

  /** Shows a conversation's `style` (added when the list does not have it yet), not chosen. */
  show(style: string | null | undefined): void {
    const value = style && style !== "default" ? style : "";
    if (value && ![...this.select.options].some((o) => o.value === value)) this.select.append(h("option", { value }, value));
    this.select.value = value;
    this.chosen = false;
  }

  /** The style to send with a message: one chosen here, else none. */
  toSend(): string | undefined {
    return this.chosen ? this.select.value || "default" : undefined;
  }
}

//! The tray's opening and closing: a column beside the page on wide screens (its state remembered
//! there), a drawer over it on narrow ones (closed on every load, since it covers the page).
//! Escape closes it (the column only when focus is in it), and focus goes back to what had it.
import { h } from "../dom.js";

/** Screens on which the tray is a column beside the page, not a drawer over it (style.css). */
const WIDE = "(min-width: 1101px)";

export class Drawer {
  readonly toggle = h("button", { class: "btn tray-toggle", type: "button", "aria-controls": "assistant", "aria-expanded": "false" }, "Assistant");
  private readonly wide = window.matchMedia(WIDE);
  /** What had focus when the tray opened: focus goes back there when it closes. */
  private opener: HTMLElement | null = null;

  /** `root`: the tray; `input`: its box, which takes the focus when it opens; `key`: where the
   * column's state is remembered. */
  constructor(private readonly root: HTMLElement, private readonly input: HTMLElement, private readonly key: string) {
    this.toggle.addEventListener("click", () => (this.root.hidden ? this.setOpen(true) : this.close()));
    document.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || e.defaultPrevented || this.root.hidden) return;
      if (this.wide.matches && !this.root.contains(document.activeElement)) return;
      e.preventDefault();
      this.close();
    });
  }

  /** Opens the tray again only where it sits beside the page and was left open. */
  restore(): void {
    this.setOpen(this.wide.matches && localStorage.getItem(this.key) === "true", false);
  }

  /** Opens or closes the tray; its state is remembered on wide screens only. */
  setOpen(open: boolean, focus = true): void {
    if (open && this.root.hidden && focus) {
      const active = document.activeElement;
      this.opener = active instanceof HTMLElement && active !== document.body && !this.root.contains(active) ? active : null;
    }
    this.root.hidden = !open;
    document.body.classList.toggle("tray-open", open);
    this.toggle.setAttribute("aria-expanded", String(open));
    if (this.wide.matches) localStorage.setItem(this.key, String(open));
    if (open && focus) this.input.focus();
  }

  /** Closes the tray and gives focus back to what had it before (else the toggle). */
  close(): void {
    const back = this.opener?.isConnected ? this.opener : this.toggle;
    this.opener = null;
    this.setOpen(false);
    back.focus();
  }
}

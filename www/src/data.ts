//! The "Your data" page (`#data`): who this browser is to the server and what it spent today
//! (`GET /api/me`), everything it owns downloaded as one JSON file (`GET /api/me/export`, every
//! section's further pages fetched and joined), and everything erased behind a confirmation
//! (`DELETE /api/me`, repeated until the server says it is done; the browser's own remembered
//! conversations are forgotten with it).

import type { ChatContext } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";
import { h, replace } from "./dom.js";
import type { Page } from "./page.js";

/** `GET /api/me`, the parts shown here. */
interface Me {
  owner: { id: string; kind: string; email?: string | null };
  usage: { calls: number };
}

/** One section of an export document. */
interface Section { items: unknown[]; cursor: string | null }

/** An export document: the owner, `complete`, and the sections by name. */
type ExportDocument = Record<string, unknown> & { complete: boolean };

/** One answer of `DELETE /api/me`. */
interface EraseStep { erased: Record<string, number>; failed: number; done: boolean }

/** The sections an export may continue (the telemetry comes whole). */
const PAGED = ["research", "streams", "assistant_conversations", "guided_conversations", "help_sessions"];
/** Most export pages or erase requests one click makes (a guard against a server that never
 * says it is done). */
const MAX_ROUNDS = 200;
/** What the app remembers in this browser about the owner's data (forgotten after an erase). */
const REMEMBERED = ["stepwise.chat.v1", "stepwise.help.session", "stepwise.assistant.v1"];
/** What the person types to confirm an erase. */
const CONFIRM_WORD = "ERASE";
/** How long to wait when a round is refused for the rate limit, and how often to try again. */
const RATE_WAIT_MS = 5_000;
const RATE_RETRIES = 12;

/** An API call that waits and tries again while the rate limit refuses it (a long export or
 * erase makes many calls in a row). */
async function patient<T>(method: string, path: string, body?: unknown): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api<T>(method, path, body);
    } catch (error) {
      if (attempt >= RATE_RETRIES || !/\(rate_limited\)$/.test((error as Error).message)) throw error;
      await new Promise((resolve) => setTimeout(resolve, RATE_WAIT_MS));
    }
  }
}

/** The "Your data" page. */
export class DataView implements Page {
  private readonly root = h("section", { class: "data-page", "aria-labelledby": "data-title" });
  private readonly notice = h("div", { "aria-live": "polite" });
  private me: Me | null = null;

  context(): ChatContext {
    return { current_page: "data" };
  }

  async mount(app: HTMLElement): Promise<void> {
    replace(app, this.root);
    this.me = await api<Me>("GET", "/api/me");
    this.render();
  }

  private render(): void {
    const me = this.me!;
    const who = me.owner.kind === "access" && me.owner.email ? `signed in as ${me.owner.email}` : "anonymous: your data belongs to a token kept in this browser";
    replace(
      this.root,
      h("h2", { id: "data-title" }, "Your data"),
      h("p", {}, `You are ${who} (owner id `, h("code", {}, me.owner.id.slice(0, 12)), `…). Model calls today: ${me.usage.calls}.`),
      this.notice,
      h("div", { class: "panel" },
        h("h3", {}, "Download"),
        h("p", {}, "Everything you own as one JSON file: research jobs, streams and their literature, assistant and guided conversations with their context requests, help sessions, and the context-request telemetry."),
        h("button", { class: "btn", type: "button", id: "data-export", onclick: () => void this.download() }, "Download my data")),
      h("div", { class: "panel" },
        h("h3", {}, "Erase"),
        h("p", {}, "Deletes everything listed above from the server, shared research pages included. It cannot be undone."),
        h("button", { class: "btn secondary danger", type: "button", id: "data-erase", onclick: () => this.confirmErase() }, "Erase all my data…")),
    );
  }

  /** Fetches the export and every further page of its sections, and saves it as a file. */
  private async download(): Promise<void> {
    const button = this.root.querySelector<HTMLButtonElement>("#data-export")!;
    button.disabled = true;
    this.say("Preparing your data…");
    try {
      const document = await patient<ExportDocument>("GET", "/api/me/export");
      let rounds = 0;
      for (const name of PAGED) {
        const section = document[name] as Section;
        while (section.cursor && rounds++ < MAX_ROUNDS) {
          const query = `section=${encodeURIComponent(name)}&cursor=${encodeURIComponent(section.cursor)}`;
          const next = (await patient<ExportDocument>("GET", `/api/me/export?${query}`))[name] as Section;
          section.items.push(...next.items);
          section.cursor = next.cursor;
        }
      }
      document.complete = PAGED.every((name) => !(document[name] as Section).cursor);
      const items = PAGED.reduce((n, name) => n + (document[name] as Section).items.length, 0);
      const blob = new Blob([JSON.stringify(document, null, 2)], { type: "application/json" });
      const link = h("a", { href: URL.createObjectURL(blob), download: `stepwise-export-${new Date().toISOString().slice(0, 10)}.json` });
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      this.say(`Downloaded ${items} ${items === 1 ? "item" : "items"}.`, "ok");
    } catch (error) {
      this.say(`The download failed: ${(error as Error).message}`, "error");
    } finally {
      button.disabled = false;
    }
  }

  /** Asks the person to type the confirmation word before anything is erased. */
  private confirmErase(): void {
    const input = h("input", { id: "erase-confirm", autocomplete: "off", "aria-describedby": "erase-what" });
    const go = h("button", { class: "btn danger-fill", type: "button", disabled: true }, "Erase everything");
    input.addEventListener("input", () => (go.disabled = input.value.trim() !== CONFIRM_WORD));
    const dialog = h("dialog", { class: "confirm-dialog", "aria-labelledby": "erase-title" });
    const close = () => dialog.close();
    go.addEventListener("click", () => {
      close();
      void this.erase();
    });
    dialog.append(
      h("h2", { id: "erase-title" }, "Erase all your data?"),
      h("p", { id: "erase-what" }, `Every research job, stream, conversation and help session of yours is deleted for good. Type ${CONFIRM_WORD} to confirm.`),
      h("div", { class: "field" }, h("label", { for: "erase-confirm" }, "Confirmation"), input),
      h("div", { class: "actions" }, h("button", { class: "btn secondary", type: "button", autofocus: true, onclick: close }, "Cancel"), go),
    );
    dialog.addEventListener("close", () => dialog.remove());
    this.root.append(dialog);
    dialog.showModal();
  }

  /** Erases in rounds until the server is done, then forgets what this browser remembered. */
  private async erase(): Promise<void> {
    const button = this.root.querySelector<HTMLButtonElement>("#data-erase")!;
    button.disabled = true;
    let erased = 0;
    let failed = 0;
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const step = await patient<EraseStep>("DELETE", "/api/me", { confirm: this.me!.owner.id });
        erased += Object.values(step.erased).reduce((a, b) => a + b, 0);
        failed = step.failed;
        if (step.done) {
          for (const key of REMEMBERED) localStorage.removeItem(key);
          this.say(`Erased: ${erased} ${erased === 1 ? "item" : "items"}. Everything of yours is erased from the server.`, "ok");
          return;
        }
        // Only failures left: trying again at once would fail again.
        if (failed > 0 && Object.values(step.erased).every((n) => n === 0)) break;
        this.say(`Erasing… ${erased} so far.`);
      }
      const why = failed > 0 ? `${failed} could not be erased now` : "the server was not done";
      this.say(`Erased ${erased} ${erased === 1 ? "item" : "items"}, but ${why}; try again later, or ask a person on the Help page.`, "error");
    } catch (error) {
      this.say(`Erasing stopped after ${erased} ${erased === 1 ? "item" : "items"}: ${(error as Error).message}`, "error");
    } finally {
      button.disabled = false;
    }
  }

  private say(text: string, kind: "ok" | "error" | "muted" = "muted"): void {
    replace(this.notice, h("p", { class: kind, role: kind === "error" ? "alert" : "status" }, text));
  }
}

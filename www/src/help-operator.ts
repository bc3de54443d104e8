//! The help desk's operators' view (`#operator`): the escalated sessions, newest first, each with
//! the question and answers it was handed over with and its transcript, to mark resolved. Asked
//! with the admin token, kept for this tab only.

import type { ChatContext } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";
import { h, replace } from "./dom.js";
import type { Session } from "./help.js";
import type { Page } from "./page.js";

const ADMIN_KEY = "stepwise.help.admin";

/** The operators' view: escalated sessions with their transcript and answers, to resolve. */
export class HelpOperatorView implements Page {
  private readonly list = h("div", { class: "operator-list", "aria-live": "polite" });
  private readonly notice = h("p", { class: "error", role: "alert", hidden: true });

  context(): ChatContext {
    return { current_page: "help" };
  }

  async mount(app: HTMLElement): Promise<void> {
    const token = h("input", { id: "admin-token", type: "password", autocomplete: "off", value: sessionStorage.getItem(ADMIN_KEY) ?? "" });
    const form = h(
      "form",
      { class: "composer", onsubmit: (e: Event) => (e.preventDefault(), sessionStorage.setItem(ADMIN_KEY, token.value), void this.load()) },
      h("label", { for: "admin-token" }, "Admin token"),
      token,
      h("button", { class: "btn", type: "submit" }, "Show escalations"),
    );
    replace(app, h("section", { class: "panel help", "aria-label": "Escalated help sessions" }, h("h2", {}, "Escalated help sessions"), form, this.notice, this.list));
    if (token.value) await this.load();
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${sessionStorage.getItem(ADMIN_KEY) ?? ""}` };
  }

  /** Shows the newest escalations, or, from `cursor`, the next page after those shown. */
  private async load(cursor?: string): Promise<void> {
    this.notice.hidden = true;
    try {
      const query = cursor ? `?limit=20&cursor=${encodeURIComponent(cursor)}` : "?limit=20";
      const page = await api<{ items: Session[]; cursor: string | null }>("GET", `/api/help/escalations${query}`, undefined, this.headers());
      if (!cursor) replace(this.list);
      this.list.querySelector(".more")?.remove();
      if (!cursor && !page.items.length) return replace(this.list, h("p", { class: "muted" }, "No session is waiting for a person."));
      this.list.append(...page.items.map((session) => this.card(session)));
      if (page.cursor) this.list.append(h("button", { class: "btn secondary more", type: "button", onclick: () => void this.load(page.cursor!) }, "More"));
    } catch (error) {
      this.notice.textContent = (error as Error).message;
      this.notice.hidden = false;
    }
  }

  private card(session: Session): HTMLElement {
    // What the person takes over: the question and answers of the moment it was handed over.
    const answers = session.escalation?.answers ?? session.state.clarification_context?.answers ?? {};
    const resolve = h("button", { class: "btn", type: "button", onclick: async () => {
      try {
        await api("POST", `/api/help/escalations/${session.id}/resolve`, {}, this.headers());
        await this.load();
      } catch (error) {
        this.notice.textContent = (error as Error).message;
        this.notice.hidden = false;
      }
    } }, "Mark resolved");
    return h(
      "article",
      { class: "operator-card", "data-session": session.id },
      h("h3", {}, session.escalation?.query ?? session.state.original_query ?? "(no question)"),
      h("p", { class: "muted" }, `Escalated ${new Date(session.escalation?.at ?? 0).toLocaleString()} (${session.escalation?.reason === "requested" ? "the user asked for a person" : "the article needs a person; the user accepted"})`),
      Object.keys(answers).length ? h("dl", { class: "answers" }, ...Object.entries(answers).flatMap(([q, a]) => [h("dt", {}, q), h("dd", {}, a)])) : null,
      h("details", {}, h("summary", {}, `Transcript (${session.messages.length} ${session.messages.length === 1 ? "message" : "messages"})`), ...session.messages.map((m) => h("p", { class: `msg ${m.role === "user" ? "user" : "assistant"}` }, m.text))),
      resolve,
    );
  }
}

//! The built-in payload cards: a query suggestion (Accept fills the Articles search and runs it),
//! a filter suggestion (Accept applies dates and order), a stream settings change (Accept
//! applies the edits, checked by the server), a research question (Accept fills the Research
//! form) and PubMed results (a result card). Registered once, at start. A card shows the state
//! its owner left it in, kept with the conversation (`showCardState`).

import type { ArticleSummary, CardState, FieldValue, StreamChange } from "../../../crates/wasm/pkg/stepwise.js";
import { h } from "../dom.js";
import type { ArticleFilter, ResearchDraftFill } from "../page.js";
import { type PayloadCallbacks, registerPayloadHandler } from "./payloads.js";

/** A card: a title, its body, and Accept/Dismiss when it can be applied. */
function card(kind: string, title: string, body: (HTMLElement | string)[], callbacks?: PayloadCallbacks, acceptLabel = "Accept"): HTMLElement {
  const status = h("p", { class: "card-status", "aria-live": "polite" });
  const buttons = callbacks
    ? h("div", { class: "actions" },
        h("button", { class: "btn", type: "button", onclick: async (e: Event) => {
          const button = e.currentTarget as HTMLButtonElement;
          button.disabled = true;
          setStatus(status, "Applying…", "pending");
          try {
            await callbacks.onAccept();
            setStatus(status, "Applied.", "ok");
            button.closest(".payload")?.setAttribute("data-state", "accepted");
          } catch (error) {
            setStatus(status, (error as Error).message, "error");
            button.disabled = false;
          }
        } }, acceptLabel),
        h("button", { class: "btn secondary", type: "button", onclick: () => callbacks.onDismiss() }, "Dismiss"))
    : null;
  return h("div", { class: "payload", "data-type": kind }, h("h4", {}, title), ...body, buttons, status);
}

/** Shows a card as its owner left it (here, in another tab, or before a reload): accepted
 * (applied, its buttons done), dismissed (set aside) or failed (why, and Accept to try again). */
export function showCardState(element: HTMLElement, state: CardState): void {
  element.setAttribute("data-state", state.outcome);
  const status = element.querySelector<HTMLElement>(".card-status");
  const buttons = [...element.querySelectorAll<HTMLButtonElement>(".actions button")];
  if (state.outcome === "accepted") {
    if (status) setStatus(status, "Applied.", "ok");
    for (const button of buttons) button.disabled = true;
  } else if (state.outcome === "failed" && status) {
    setStatus(status, state.note || "Applying it failed.", "error");
  }
}

/** A card's status line, styled by what it reports: work under way, success, or a failure. */
function setStatus(status: HTMLElement, text: string, kind: "pending" | "ok" | "error"): void {
  status.textContent = text;
  status.className = `card-status ${kind}`;
  status.setAttribute("data-kind", kind);
}

/** `n` with its noun, singular or plural: `1 article`, `2,500 articles`. */
const counted = (n: number, one: string, many: string) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

const explanation = (text?: string) => (text ? h("p", { class: "muted" }, text) : null);

/** Fails clearly when the page on screen cannot apply a card. */
function need<T>(hook: T | undefined, where: string): T {
  if (!hook) throw new Error(`Open ${where} to apply this.`);
  return hook;
}

export function registerBuiltinCards(): void {
  registerPayloadHandler<{ query: string; explanation?: string }>("query_suggestion", {
    render: (data, callbacks) => card("query_suggestion", "Suggested query", [h("code", { class: "query" }, data.query), explanation(data.explanation) ?? ""], callbacks),
    accept: async (data, host) => {
      const page = host.page();
      await need(page.applyQuery?.bind(page), "a stream's Articles tab")(data.query);
    },
  });
  registerPayloadHandler<ArticleFilter & { explanation?: string }>("filter_suggestion", {
    render: (data, callbacks) => {
      const parts = [data.mindate && `from ${data.mindate}`, data.maxdate && `to ${data.maxdate}`, data.sort && (data.sort === "date" ? "newest first" : "best match first")].filter(Boolean);
      return card("filter_suggestion", "Suggested filter", [h("p", {}, parts.join(", ") || "no change"), explanation(data.explanation) ?? ""], callbacks);
    },
    accept: async (data, host) => {
      const page = host.page();
      await need(page.applyFilter?.bind(page), "a stream's Articles tab")({ mindate: data.mindate, maxdate: data.maxdate, sort: data.sort });
    },
  });
  registerPayloadHandler<{ edits?: { field: string; value: FieldValue }[]; chat_instructions?: string; explanation?: string }>("stream_config_suggestion", {
    render: (data, callbacks) => {
      const rows = (data.edits ?? []).map((e) => h("li", {}, h("strong", {}, e.field.replace(/_/g, " ")), ": ", Array.isArray(e.value) ? e.value.join(", ") : e.value));
      if (data.chat_instructions !== undefined) rows.push(h("li", {}, h("strong", {}, "chat instructions"), ": ", data.chat_instructions));
      return card("stream_config_suggestion", "Suggested settings", [h("ul", {}, ...rows), explanation(data.explanation) ?? ""], callbacks);
    },
    accept: async (data, host) => {
      const change: StreamChange = {};
      if (data.edits?.length) change.edits = data.edits;
      if (data.chat_instructions !== undefined) change.chat_instructions = data.chat_instructions;
      const page = host.page();
      await need(page.applyStreamChange?.bind(page), "a saved stream")(change);
    },
  });
  registerPayloadHandler<ResearchDraftFill & { explanation?: string }>("research_draft_suggestion", {
    render: (data, callbacks) =>
      card("research_draft_suggestion", "Research question", [h("p", { class: "report" }, data.prompt), data.providers?.length ? h("p", { class: "muted" }, `Over ${data.providers.join(", ")}`) : "", explanation(data.explanation) ?? ""], callbacks, "Fill the research form"),
    accept: async (data, host) => {
      let page = host.page();
      if (!page.fillResearchDraft) page = await host.go("#research");
      need(page.fillResearchDraft?.bind(page), "the Research page")(data);
    },
  });
  registerPayloadHandler<{ query: string; count: number; articles: ArticleSummary[] }>("pubmed_search_results", {
    render: (data) =>
      card("pubmed_search_results", `PubMed: ${counted(data.count, "article", "articles")}`, [
        h("p", { class: "muted" }, h("code", {}, data.query)),
        h("ol", { class: "mini-results" }, ...data.articles.map((a) => h("li", {}, h("a", { href: `https://pubmed.ncbi.nlm.nih.gov/${a.pmid}/`, target: "_blank", rel: "noopener" }, a.title), h("span", { class: "muted" }, ` ${a.journal} · ${a.year ?? "n.d."}`)))),
      ]),
  });
}

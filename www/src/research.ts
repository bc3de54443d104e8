//! The research dashboard: create and edit drafts, start them, and follow each job live through
//! its events stream, with one card per job following research-lifecycle.md's Status → UI table.
//! The job in focus (clicked, or opened by the assistant) is the assistant's `report_id`, seen
//! with what its card shows: each provider's report and the synthesis; the tray also sees every
//! job's status per provider and the unsaved new-research form. Withdrawing a share link
//! asks first.

import type { ChatContext, Health, ProviderInfo, Research, ResearchDraft, ResearchList, ResearchStatus } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { authHeaders } from "./owner.js";
import type { Page, ResearchDraftFill } from "./page.js";
import { readSse } from "./sse.js";

const FINAL: ResearchStatus[] = ["completed", "failed"];

/** Longest wait between two attempts to reopen an events stream, in ms. */
const MAX_BACKOFF_MS = 30_000;
/** Characters of each report given to the assistant (the synthesis gets half as many again). */
const CONTEXT_REPORT_CHARS = 3000;
/** Most bytes of context JSON sent: under the server's 48 KiB, with room for the job list. */
const MAX_CONTEXT_BYTES = 40 * 1024;

/** `text` cut to `chars` characters, marked when cut. */
const cut = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars)}…` : text);

/** The job in focus as the assistant sees it: what its card shows, reports cut to `chars`. */
function jobContext(job: Research, chars: number): Record<string, unknown> {
  return {
    title: job.title,
    status: job.status,
    prompt: job.prompt.slice(0, 500),
    providers: job.selected_llms,
    reports: job.llm_results.map((r) => ({ provider: r.provider, status: r.status, ...(r.result ? { text: cut(r.result, chars) } : {}), ...(r.error ? { error: r.error.message } : {}) })),
    ...(job.synthesized_result ? { synthesis: { provider: job.synthesis_llm, text: cut(job.synthesized_result, Math.floor(chars * 1.5)) } } : {}),
    ...(job.points_of_interest?.length ? { points_of_interest: job.points_of_interest.slice(0, 20).map((p) => cut(p, 300)) } : {}),
    ...(job.synthesis_not_available ? { synthesis_not_available: true } : {}),
    shared: !!job.share_info,
  };
}

/** The research screen. */
export class ResearchView implements Page {
  private providers: ProviderInfo[] = [];
  private defaultSynthesis = "";
  private readonly cards = h("div", { class: "cards", "aria-live": "polite" });
  private readonly streams = new Map<string, AbortController>();
  /** Jobs whose events stream was refused (429, 404): not reopened until a reload. */
  private readonly refused = new Set<string>();
  private readonly notice = h("div", { "aria-live": "assertive" });
  /** The jobs shown, by id, and the one in focus. */
  private readonly jobs = new Map<string, Research>();
  private focused: string | null = null;
  private newForm: HTMLFormElement | null = null;

  /** `focus`: a job to bring into view (from `#research/<id>`). */
  constructor(private readonly focus: string | null = null) {}

  /** The assistant's view of this page: the jobs (summaries) and the one in focus, with what
   * its card shows (each provider's report and the synthesis, cut to fit the context's size). */
  context(): ChatContext {
    // Only a job the user opened is in view: the newest is one card among the others.
    const job = this.focused ? this.jobs.get(this.focused) : undefined;
    const form = this.newFormState();
    for (let chars = CONTEXT_REPORT_CHARS; ; chars = Math.floor(chars / 2)) {
      const context: ChatContext = {
        current_page: "research",
        ...(job ? { report_id: job.id, job: jobContext(job, chars) } : {}),
        ...(form ? { new_research_form: form } : {}),
        results: { jobs: this.jobs.size },
        item_summaries: [...this.jobs.values()].map((j) => ({
          id: j.id, title: j.title, status: j.status, created_at: j.created_at,
          providers: Object.fromEntries(j.llm_results.map((r) => [r.provider, r.status])),
        })),
      };
      if (chars < 200 || new TextEncoder().encode(JSON.stringify(context)).length <= MAX_CONTEXT_BYTES) return context;
    }
  }

  /** What the new-research form holds, unsaved; `null` while its question is empty. */
  private newFormState(): Record<string, unknown> | null {
    const form = this.newForm;
    const prompt = form?.querySelector<HTMLTextAreaElement>("textarea")?.value.trim();
    if (!form || !prompt) return null;
    const providers = [...form.querySelectorAll<HTMLInputElement>("input[name=provider]:checked")].map((b) => b.value);
    return { prompt: prompt.slice(0, 1000), providers, synthesis_provider: form.querySelector<HTMLSelectElement>("select")?.value };
  }

  /** Fills the new-research form from an accepted suggestion. */
  fillResearchDraft(draft: ResearchDraftFill): void {
    const form = this.newForm;
    if (!form) return;
    form.querySelector<HTMLTextAreaElement>("textarea")!.value = draft.prompt;
    if (draft.providers?.length) {
      for (const box of form.querySelectorAll<HTMLInputElement>("input[name=provider]")) box.checked = draft.providers.includes(box.value);
    }
    form.scrollIntoView({ block: "nearest" });
    form.querySelector<HTMLTextAreaElement>("textarea")!.focus();
  }

  async mount(parent: Element): Promise<void> {
    const health = await api<Health>("GET", "/healthz");
    this.providers = health.providers;
    this.defaultSynthesis = health.provider.name;
    const form = this.form(undefined, async (fields) => {
      const job = await api<Research>("POST", "/api/research/draft", fields);
      this.upsert(job, true);
    });
    this.newForm = form;
    replace(
      parent,
      h("div", { class: "research-layout" },
        h("section", { class: "panel", "aria-labelledby": "new-research" }, h("h2", { id: "new-research" }, "New research"), form),
        h("section", { "aria-labelledby": "jobs" }, h("h2", { id: "jobs" }, "Research jobs"), this.notice, this.cards)),
    );
    await this.refreshList();
    if (this.focus) {
      const job = this.jobs.get(this.focus) ?? (await api<Research>("GET", `/api/research/${this.focus}`).catch(() => null));
      if (job) {
        this.upsert(job, !this.jobs.has(job.id));
        this.focused = job.id;
        this.cards.querySelector<HTMLElement>(`[data-id="${job.id}"]`)?.scrollIntoView({ block: "nearest" });
      }
    }
  }

  /** An approved assistant tool started a research job: the list shows it, live. */
  async dataChanged(tool: string): Promise<void> {
    if (tool === "start_research") await this.refreshList();
  }

  /** Leaves the screen: closes every events stream. */
  unmount(): void {
    for (const stream of this.streams.values()) stream.abort();
    this.streams.clear();
  }

  private async refreshList(): Promise<void> {
    try {
      const list = await api<ResearchList>("GET", "/api/research?limit=20");
      const jobs = await Promise.all(list.items.map((item) => api<Research>("GET", `/api/research/${item.id}`).catch(() => null)));
      for (const job of jobs) if (job) this.upsert(job, false);
    } catch (error) {
      replace(this.notice, h("p", { class: "error", role: "alert" }, (error as Error).message));
    }
  }

  /** The draft form, for a new job or to edit a draft. */
  private form(job: Research | undefined, submit: (fields: ResearchDraft) => Promise<void>): HTMLFormElement {
    const prefix = job ? `edit-${job.id.slice(0, 8)}` : "new";
    const prompt = h("textarea", { id: `${prefix}-prompt`, rows: 4, required: true, maxlength: 20000 }, job?.prompt ?? "");
    const boxes = this.providers.map((p) =>
      h("label", {}, h("input", { type: "checkbox", name: "provider", value: p.name, checked: job ? job.selected_llms.includes(p.name) : true }), ` ${p.name} `, h("span", { class: "muted" }, `(${p.kind})`)),
    );
    const synthesis = h("select", { id: `${prefix}-synthesis` }, ...this.providers.map((p) => h("option", { value: p.name, selected: p.name === (job?.synthesis_llm ?? this.defaultSynthesis) }, p.name)));
    const reportTitle = h("input", { id: `${prefix}-report-title`, value: job?.external_reports[0]?.title ?? "" });
    const reportContent = h("textarea", { id: `${prefix}-report-content`, rows: 3 }, job?.external_reports[0]?.content ?? "");
    const error = h("div", { "aria-live": "assertive" });
    const button = h("button", { class: "btn", type: "submit" }, job ? "Save draft" : "Create draft");
    const form = h("form", { class: "draft-form" },
      h("div", { class: "field" }, h("label", { for: `${prefix}-prompt` }, "Research question"), prompt),
      h("fieldset", {}, h("legend", {}, "Providers"), ...boxes),
      h("div", { class: "field" }, h("label", { for: `${prefix}-synthesis` }, "Synthesis provider"), synthesis),
      h("details", {}, h("summary", {}, "External report (optional)"),
        h("div", { class: "field" }, h("label", { for: `${prefix}-report-title` }, "Title"), reportTitle),
        h("div", { class: "field" }, h("label", { for: `${prefix}-report-content` }, "Content"), reportContent)),
      error, button);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const selected = [...form.querySelectorAll<HTMLInputElement>("input[name=provider]:checked")].map((b) => b.value);
      const reports = reportContent.value.trim() ? [{ title: reportTitle.value.trim() || "External report", content: reportContent.value }] : [];
      button.disabled = true;
      replace(error);
      try {
        await submit({ prompt: prompt.value, selected_llms: selected, synthesis_llm: synthesis.value, external_reports: reports });
        if (!job) prompt.value = "";
      } catch (err) {
        replace(error, h("p", { class: "error", role: "alert" }, (err as Error).message));
      } finally {
        button.disabled = false;
      }
    });
    return form;
  }

  /** Shows a job's card (new ones first) and follows it while it can still change. */
  private upsert(job: Research, first: boolean): void {
    this.jobs.set(job.id, job);
    const existing = this.cards.querySelector<HTMLElement>(`[data-id="${job.id}"]`);
    const card = this.card(job);
    if (existing) existing.replaceWith(card);
    else if (first) this.cards.prepend(card);
    else this.cards.append(card);
    if (!FINAL.includes(job.status) && job.status !== "draft") this.follow(job.id);
  }

  /** Subscribes to the job's events (read with fetch, so the request carries the owner's
   * token); every change re-reads the job and redraws its card. A broken stream is reopened
   * after a growing wait (1 s, 2 s, 4 s… at most 30 s); a 429 or 404, or the server's `end`,
   * stops it for good. */
  private follow(id: string): void {
    if (this.streams.has(id) || this.refused.has(id)) return;
    const controller = new AbortController();
    this.streams.set(id, controller);
    const refresh = async () => {
      try {
        const job = await api<Research>("GET", `/api/research/${id}`);
        this.upsert(job, false);
      } catch {
        /* the next event retries */
      }
    };
    /** Reads the stream until it ends ("end"), is refused for good ("refused") or the view
     * leaves ("left"). */
    const run = async (): Promise<"end" | "refused" | "left"> => {
      let wait = 1000;
      while (!controller.signal.aborted) {
        try {
          const response = await fetch(`/api/research/${id}/events`, { headers: authHeaders({ accept: "text/event-stream" }), signal: controller.signal });
          if (response.status === 429 || response.status === 404) return "refused";
          if (!response.ok || !response.body) throw new Error(`events answered ${response.status}`);
          wait = 1000;
          for await (const message of readSse(response.body)) {
            if (message.event === "end") return "end";
            await refresh();
          }
        } catch {
          if (controller.signal.aborted) return "left";
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(wait * 2, MAX_BACKOFF_MS);
      }
      return "left";
    };
    void run().then((reason) => {
      if (reason === "refused") this.refused.add(id);
      if (this.streams.get(id) === controller) this.streams.delete(id);
      if (reason === "end") void refresh();
    });
  }

  private unfollow(id: string): void {
    this.streams.get(id)?.abort();
    this.streams.delete(id);
  }

  private async act(id: string, method: string, path: string, body?: unknown): Promise<void> {
    try {
      const job = await api<Research>(method, path, body);
      this.refused.delete(id); // the user acted: follow the job again
      this.upsert(job, false);
    } catch (error) {
      replace(this.notice, h("p", { class: "error", role: "alert" }, (error as Error).message));
    }
  }

  /** One card, by status (research-lifecycle.md, "Status → UI Mapping"). */
  private card(job: Research): HTMLElement {
    const badge = h("span", { class: `badge ${job.status}`, "data-status": job.status }, job.status.replace(/_/g, " "));
    const body: (HTMLElement | string)[] = [];
    const completed = job.llm_results.filter((r) => r.status === "completed");
    switch (job.status) {
      case "draft": {
        body.push(this.form(job, async (fields) => this.upsert(await api<Research>("PUT", `/api/research/${job.id}/draft`, fields), false)));
        body.push(h("div", { class: "actions" }, h("button", { class: "btn", type: "button", onclick: () => this.act(job.id, "POST", "/api/research", { research_id: job.id }) }, "Start research")));
        break;
      }
      case "processing":
        body.push(this.progress(job));
        break;
      case "synthesizing":
        body.push(h("p", {}, "Synthesizing results..."), this.progress(job));
        break;
      case "retrying":
        body.push(h("p", {}, "Retrying failed providers..."), this.progress(job));
        break;
      case "awaiting_confirmation": {
        const failed = job.partial_failure?.failed_providers ?? [];
        body.push(
          this.progress(job),
          h("div", { role: "group", "aria-label": "Some providers failed", class: "confirm" },
            h("p", {}, `${failed.join(", ")} failed. Proceed with ${completed.length} result${completed.length === 1 ? "" : "s"}, retry the failed provider${failed.length === 1 ? "" : "s"} (${job.retry_count} of 2 retries used), or cancel?`),
            h("div", { class: "actions" },
              h("button", { class: "btn", type: "button", onclick: () => this.act(job.id, "POST", `/api/research/${job.id}/confirm`, { action: "proceed" }) }, "Proceed"),
              h("button", { class: "btn secondary", type: "button", onclick: () => this.act(job.id, "POST", `/api/research/${job.id}/confirm`, { action: "retry" }) }, "Retry"),
              h("button", { class: "btn secondary", type: "button", onclick: () => this.act(job.id, "POST", `/api/research/${job.id}/confirm`, { action: "cancel" }) }, "Cancel"))),
        );
        break;
      }
      case "completed": {
        if (job.synthesized_result) body.push(h("h4", {}, `Synthesis by ${job.synthesis_llm}`), h("div", { class: "report synthesis" }, job.synthesized_result));
        else if (job.synthesis_not_available) body.push(h("p", { class: "muted not-available" }, "Synthesis not available"));
        body.push(...this.reports(job, !!job.synthesized_result));
        body.push(this.sharing(job));
        break;
      }
      case "failed":
        body.push(
          h("p", { class: "error", role: "alert" }, job.error ?? "The job failed."),
          this.progress(job),
          h("div", { class: "actions" }, h("button", { class: "btn", type: "button", onclick: () => this.act(job.id, "POST", `/api/research/${job.id}/retry`) }, "Retry")),
        );
        break;
    }
    const remove = h("button", { class: "btn link delete", type: "button", "aria-label": `Delete ${job.title}`, onclick: () => this.remove(job) }, "Delete");
    return h("article", { class: `card panel${this.focused === job.id ? " focused" : ""}`, "data-id": job.id, "aria-labelledby": `title-${job.id}`, onpointerdown: () => this.setFocus(job.id) },
      h("h3", { id: `title-${job.id}` }, job.title, " ", badge, " ", remove),
      h("p", { class: "muted" }, job.prompt.length > 140 ? `${job.prompt.slice(0, 140)}…` : job.prompt),
      ...body);
  }

  /** Puts a job in focus (the assistant's `report_id`). */
  private setFocus(id: string): void {
    this.focused = id;
    for (const card of this.cards.querySelectorAll<HTMLElement>(".card")) card.classList.toggle("focused", card.dataset.id === id);
  }

  /** A completed job's sharing: publish a read-only link (it expires), or withdraw it. */
  private sharing(job: Research): HTMLElement {
    const share = job.share_info;
    if (!share) {
      return h("div", { class: "actions" },
        h("button", { class: "btn secondary", type: "button", onclick: () => this.act(job.id, "POST", `/api/research/${job.id}/share`) }, "Publish a share link"));
    }
    const until = new Date(share.expires_at).toISOString().slice(0, 10);
    return h("p", { class: "share-row" },
      h("a", { href: share.url, target: "_blank", rel: "noopener", class: "share" }, "Share link (read-only report)"),
      h("span", { class: "muted" }, ` until ${until} `),
      h("button", { class: "btn link", type: "button", onclick: () => this.withdraw(job) }, "Withdraw"));
  }

  /** Withdraws a job's share link after the user confirms: the page goes at once. */
  private async withdraw(job: Research): Promise<void> {
    if (!confirm(`Withdraw the share link of "${job.title}"? Anyone who opens it will see that the report is no longer shared.`)) return;
    await this.act(job.id, "DELETE", `/api/research/${job.id}/share`);
  }

  /** Deletes a job after the user confirms: its record, list entry and share page. */
  private async remove(job: Research): Promise<void> {
    if (!confirm(`Delete "${job.title}"? Its report and share link go too.`)) return;
    try {
      await api<null>("DELETE", `/api/research/${job.id}`);
      this.unfollow(job.id);
      this.jobs.delete(job.id);
      if (this.focused === job.id) this.focused = null;
      this.cards.querySelector(`[data-id="${job.id}"]`)?.remove();
    } catch (error) {
      replace(this.notice, h("p", { class: "error", role: "alert" }, (error as Error).message));
    }
  }

  /** A progress row per provider. */
  private progress(job: Research): HTMLElement {
    return h("ul", { class: "progress", "aria-label": "Providers" },
      ...job.llm_results.map((r) => h("li", { "data-provider": r.provider }, h("span", {}, r.provider), h("span", { class: r.status === "failed" ? "error-text" : "" }, r.status === "failed" ? `failed: ${r.error?.message ?? ""}` : r.status + (r.attempt > 1 ? ` (attempt ${r.attempt})` : "")))));
  }

  /** The individual reports (collapsed when a synthesis is shown). */
  private reports(job: Research, collapsed: boolean): HTMLElement[] {
    return job.llm_results
      .filter((r) => r.status === "completed")
      .map((r) => {
        const report = h("div", { class: "report" }, r.result ?? "");
        return collapsed ? h("details", {}, h("summary", {}, `Report by ${r.provider}`), report) : h("section", {}, h("h4", {}, `Report by ${r.provider}`), report);
      });
  }
}

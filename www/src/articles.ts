//! The Streams page's Articles tab: a PubMed search through the Worker (query prefilled from the
//! stream's keywords and focus areas, date range, order, pages), a results list of summaries,
//! an abstract viewer and a selection. Everything on screen is in its assistant context.

import type { ArticleAbstract, ArticleSearch, ChatContext } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";
import { h, replace } from "./dom.js";
import type { ArticleFilter } from "./page.js";

const PER_PAGE = 20;

/** The Articles tab of one stream. */
export class ArticlesTab {
  readonly root = h("div", { class: "articles" });
  private readonly query = h("input", { id: "article-query", type: "search", required: true, maxlength: 2000, autocomplete: "off" });
  private readonly mindate = h("input", { id: "article-mindate", placeholder: "YYYY", size: 10, maxlength: 10 });
  private readonly maxdate = h("input", { id: "article-maxdate", placeholder: "YYYY", size: 10, maxlength: 10 });
  private readonly sort = h("select", { id: "article-sort" }, h("option", { value: "relevance" }, "Best match"), h("option", { value: "date" }, "Newest first"));
  private readonly status = h("p", { class: "muted", "aria-live": "polite" });
  private readonly list = h("ol", { class: "results", "aria-label": "Articles" });
  private readonly pager = h("div", { class: "actions pager" });
  private readonly viewer = h("section", { class: "viewer panel", "aria-label": "Article", hidden: true });
  private result: ArticleSearch | null = null;
  private page = 1;
  private open: ArticleAbstract | null = null;
  private readonly selection = new Set<string>();

  /** `streamId`: the stream whose literature the searches and opened abstracts are kept as (the
   * assistant can then supply them as the stream's phase-1 context). */
  constructor(defaultQuery: string, private readonly streamId: string) {
    this.query.value = defaultQuery;
    const form = h("form", { class: "search-form", role: "search", onsubmit: (e: Event) => (e.preventDefault(), void this.search(1)) },
      h("div", { class: "field grow" }, h("label", { for: "article-query" }, "PubMed query"), this.query),
      h("div", { class: "field" }, h("label", { for: "article-mindate" }, "From"), this.mindate),
      h("div", { class: "field" }, h("label", { for: "article-maxdate" }, "To"), this.maxdate),
      h("div", { class: "field" }, h("label", { for: "article-sort" }, "Order"), this.sort),
      h("button", { class: "btn", type: "submit" }, "Search"));
    this.root.append(form, this.status, h("div", { class: "articles-layout" }, h("div", {}, this.list, this.pager), this.viewer));
  }

  /** Runs the search the form holds, at `page`. */
  async search(page: number): Promise<void> {
    const params = new URLSearchParams({ query: this.query.value.trim(), sort: this.sort.value, page: String(page), per_page: String(PER_PAGE), stream_id: this.streamId });
    if (this.mindate.value.trim()) params.set("mindate", this.mindate.value.trim());
    if (this.maxdate.value.trim()) params.set("maxdate", this.maxdate.value.trim());
    replace(this.status, "Searching PubMed…");
    try {
      this.result = await api<ArticleSearch>("GET", `/api/articles/search?${params}`);
      this.page = page;
      this.selection.clear();
      this.render();
    } catch (error) {
      this.result = null;
      replace(this.list);
      replace(this.pager);
      replace(this.status, h("span", { class: "error", role: "alert" }, (error as Error).message));
    }
  }

  /** An accepted query suggestion: the query goes in the field and runs. */
  async applyQuery(query: string): Promise<void> {
    this.query.value = query;
    await this.search(1);
  }

  /** An accepted filter suggestion: dates and order apply, and the search runs again. */
  async applyFilter(filter: ArticleFilter): Promise<void> {
    if (filter.mindate !== undefined) this.mindate.value = filter.mindate;
    if (filter.maxdate !== undefined) this.maxdate.value = filter.maxdate;
    if (filter.sort) this.sort.value = filter.sort;
    await this.search(1);
  }

  /** The tab's part of the assistant context: the form, order, page, counts, viewer, selection
   * and a summary of each article on screen. */
  context(): Partial<ChatContext> {
    const articles = this.result?.articles ?? [];
    return {
      search_form: { query: this.query.value, mindate: this.mindate.value || null, maxdate: this.maxdate.value || null },
      sort: { by: this.sort.value },
      pagination: { page: this.page, per_page: PER_PAGE },
      results: this.result ? { total: this.result.count, loaded: articles.length, pages: Math.ceil(this.result.count / PER_PAGE) } : { total: null, loaded: 0 },
      viewer: this.open ? { pmid: this.open.pmid, title: this.open.title } : null,
      selection: [...this.selection],
      item_summaries: articles.map((a) => ({ pmid: a.pmid, title: a.title, journal: a.journal, year: a.year, authors: a.authors.slice(0, 3) })),
    };
  }

  private render(): void {
    const result = this.result!;
    const pages = Math.max(1, Math.ceil(result.count / PER_PAGE));
    replace(this.status, result.count ? `${result.count.toLocaleString("en")} ${result.count === 1 ? "article" : "articles"} · page ${this.page} of ${pages}` : "No articles found.");
    replace(
      this.list,
      ...result.articles.map((a) => {
        const box = h("input", { type: "checkbox", "aria-label": `Select ${a.pmid}`, checked: this.selection.has(a.pmid), onchange: (e: Event) => ((e.target as HTMLInputElement).checked ? this.selection.add(a.pmid) : this.selection.delete(a.pmid)) });
        const meta = [a.journal, a.year ?? "n.d.", a.authors.slice(0, 3).join(", ")].filter(Boolean).join(" · ");
        return h("li", { class: "result", "data-pmid": a.pmid },
          box,
          h("div", {},
            h("button", { class: "btn link title", type: "button", onclick: () => this.show(a.pmid) }, a.title),
            h("div", { class: "muted" }, meta, " · ", h("a", { href: `https://pubmed.ncbi.nlm.nih.gov/${a.pmid}/`, target: "_blank", rel: "noopener" }, `PMID ${a.pmid}`))));
      }),
    );
    replace(
      this.pager,
      h("button", { class: "btn secondary", type: "button", disabled: this.page <= 1, onclick: () => this.search(this.page - 1) }, "Previous"),
      h("button", { class: "btn secondary", type: "button", disabled: this.page >= pages, onclick: () => this.search(this.page + 1) }, "Next"),
    );
  }

  /** Opens an article's abstract in the viewer. */
  private async show(pmid: string): Promise<void> {
    this.viewer.hidden = false;
    replace(this.viewer, h("p", { class: "muted" }, "Loading the abstract…"));
    try {
      const { articles } = await api<{ articles: ArticleAbstract[] }>("GET", `/api/articles/abstracts?${new URLSearchParams({ ids: pmid, stream_id: this.streamId })}`);
      const a = articles[0];
      if (!a) throw new Error("PubMed has no abstract for this article.");
      this.open = a;
      replace(this.viewer,
        h("button", { class: "btn link close", type: "button", "aria-label": "Close the article", onclick: () => ((this.open = null), (this.viewer.hidden = true)) }, "×"),
        h("h3", {}, a.title), h("p", { class: "muted" }, `${a.journal} · ${a.year ?? "n.d."} · PMID ${a.pmid}`),
        h("div", { class: "report" }, a.text || "(no abstract)"));
    } catch (error) {
      replace(this.viewer, h("p", { class: "error", role: "alert" }, (error as Error).message));
    }
  }
}

//! The Streams page: the owner's saved streams, and one stream's Articles and Settings tabs.
//! Routes: `#streams`, `#streams/<id>`, `#streams/<id>/articles|settings`. The page's assistant
//! context is the stream plus the active tab's own (the Settings tab's: its unsaved edits), and
//! the saved streams listed beside it.

import type { ChatContext, SavedStream, SavedStreamItem, StreamChange, Workflow } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";
import { ArticlesTab } from "./articles.js";
import { h, replace } from "./dom.js";
import type { ArticleFilter, Page } from "./page.js";
import { SettingsTab } from "./settings.js";

export type StreamTab = "articles" | "settings";

/** Most saved streams listed in the assistant context. */
const MAX_CONTEXT_STREAMS = 50;

/** The Streams screen. */
export class StreamsView implements Page {
  private readonly list = h("ul", { class: "stream-list" });
  private items: SavedStreamItem[] = [];
  private readonly body = h("section", { class: "stream-body", "aria-live": "polite" });
  private stream: SavedStream | null = null;
  private articles: ArticlesTab | null = null;
  private settings: SettingsTab | null = null;
  private tab: StreamTab = "articles";

  constructor(private readonly workflow: Workflow, readonly streamId: string | null, tab: StreamTab | null) {
    if (tab) this.tab = tab;
  }

  async mount(parent: Element): Promise<void> {
    replace(parent, h("div", { class: "streams-layout" }, h("nav", { class: "panel", "aria-label": "Saved streams" }, h("h2", {}, "Streams"), this.list), this.body));
    const { items } = await api<{ items: SavedStreamItem[] }>("GET", "/api/streams?limit=100");
    this.items = items;
    this.renderList();
    const id = this.streamId ?? items[0]?.id;
    if (!id) {
      replace(this.body, h("div", { class: "panel empty" }, h("p", {}, "No saved streams yet."), h("a", { class: "btn", href: "#chat" }, "Configure one in the guided chat")));
      return;
    }
    this.stream = await api<SavedStream>("GET", `/api/streams/${id}`);
    this.articles = new ArticlesTab(this.stream.default_query, this.stream.id);
    this.settings = this.settingsOf(this.stream);
    this.render();
    if (this.tab === "articles" && this.stream.default_query) await this.articles.search(1);
  }

  /** The Settings tab of `stream`. */
  private settingsOf(stream: SavedStream): SettingsTab {
    return new SettingsTab(stream, this.workflow, (s) => this.changed(s), () => (location.hash = "#streams"));
  }

  /** The stream was changed: the list shows its new name at once, not after a reload. */
  private changed(s: SavedStream): void {
    this.stream = s;
    this.items = this.items.map((item) => (item.id === s.id ? { ...item, name: s.name, updated_at: s.updated_at } : item));
    this.renderList();
    this.render();
  }

  /** An approved assistant tool changed a stream: the one in view is read again. */
  async dataChanged(tool: string, args: Record<string, unknown>): Promise<void> {
    if (tool !== "update_stream_settings" || !this.stream || args.stream_id !== this.stream.id) return;
    const stream = await api<SavedStream>("GET", `/api/streams/${this.stream.id}`);
    this.settings = this.settingsOf(stream);
    this.changed(stream);
  }

  /** Shows `tab` (the route changed within this stream). */
  showTab(tab: StreamTab): void {
    this.tab = tab;
    this.render();
  }

  context(): ChatContext {
    const stream = this.stream;
    const listed = this.items.slice(0, MAX_CONTEXT_STREAMS).map((s) => ({ id: s.id, name: s.name }));
    if (!stream) return { current_page: "streams", results: { streams: this.items.length }, item_summaries: listed };
    const tab = this.tab === "articles" ? this.articles!.context() : this.settings!.context();
    return {
      current_page: "streams",
      active_tab: this.tab,
      stream_id: stream.id,
      stream: { name: stream.name, config: stream.config, chat_instructions: stream.chat_instructions },
      saved_streams: listed,
      ...tab,
    };
  }

  async applyQuery(query: string): Promise<void> {
    this.switchTo("articles");
    await this.articles?.applyQuery(query);
  }

  async applyFilter(filter: ArticleFilter): Promise<void> {
    this.switchTo("articles");
    await this.articles?.applyFilter(filter);
  }

  async applyStreamChange(change: StreamChange): Promise<void> {
    if (!this.settings) throw new Error("Open a stream first.");
    this.switchTo("settings");
    await this.settings.apply(change);
  }

  /** Shows `tab` and puts it in the address (without reloading the page). */
  private switchTo(tab: StreamTab): void {
    if (this.tab === tab || !this.stream) return;
    history.replaceState(null, "", `#streams/${this.stream.id}/${tab}`);
    this.showTab(tab);
  }

  private renderList(): void {
    const current = this.stream?.id ?? this.streamId;
    replace(this.list, ...this.items.map((s) => h("li", {}, h("a", { href: `#streams/${s.id}`, "aria-current": s.id === current ? "page" : undefined }, s.name))));
  }

  private render(): void {
    const stream = this.stream!;
    const tabs = (["articles", "settings"] as StreamTab[]).map((tab) =>
      h("a", { class: "tab", role: "tab", href: `#streams/${stream.id}/${tab}`, "aria-selected": String(tab === this.tab), "aria-current": tab === this.tab ? "page" : undefined }, tab === "articles" ? "Articles" : "Settings"),
    );
    const panel = this.tab === "articles" ? this.articles!.root : this.settings!.root;
    replace(this.body, h("h2", {}, stream.name), h("div", { class: "tabs", role: "tablist", "aria-label": "Stream" }, ...tabs), h("div", { role: "tabpanel" }, panel));
  }
}

//! Entry point of the browser app: loads the wasm package, then shows the page the URL hash
//! names (`#chat`, `#streams[/<id>[/articles|settings]]`, `#research[/<id>]`, `#help`,
//! `#help/operator`, `#data`), with the assistant tray beside every page.

import init, { Workflow, type ChatRegistryJson } from "../../crates/wasm/pkg/stepwise.js";
import { registerBuiltinCards } from "./assistant/cards.js";
import { Tray } from "./assistant/tray.js";
import { ChatView } from "./chat.js";
import { DataView } from "./data.js";
import { h, replace } from "./dom.js";
import { HelpView } from "./help.js";
import { HelpOperatorView } from "./help-operator.js";
import type { Page } from "./page.js";
import { ResearchView } from "./research.js";
import { type StreamTab, StreamsView } from "./streams.js";
import { tabSettled } from "./tab.js";

/** A route: the page and its parts. */
function parse(hash: string): { page: "chat" | "streams" | "research" | "help" | "data"; id: string | null; tab: StreamTab | null } {
  const [page, id, tab] = hash.replace(/^#/, "").split("/");
  const known = page === "streams" || page === "research" || page === "help" || page === "data" ? page : "chat";
  return { page: known, id: id || null, tab: tab === "settings" || tab === "articles" ? tab : null };
}

async function main(): Promise<void> {
  const app = document.getElementById("app")!;
  try {
    // (The tab's id is settled meanwhile: nothing reads it before.)
    await Promise.all([init({ module_or_path: "/pkg/stepwise_bg.wasm" }), tabSettled]);
  } catch (error) {
    replace(app, h("p", { class: "error", role: "alert" }, `WebAssembly could not be loaded: ${(error as Error).message}`));
    return;
  }
  let workflow: Workflow;
  try {
    const response = await fetch("/api/workflows/research_stream");
    workflow = response.ok ? new Workflow(await response.json()) : Workflow.builtin("research_stream");
  } catch {
    workflow = Workflow.builtin("research_stream");
  }
  let page: Page = new ChatView(workflow);
  let shown: Promise<void> = Promise.resolve();

  const show = async () => {
    const route = parse(location.hash);
    for (const tab of ["chat", "streams", "research", "help", "data"]) {
      const link = document.getElementById(`tab-${tab}`)!;
      if (tab === route.page) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    // A tab of the stream on screen is shown in place; any other route mounts its page.
    if (route.page === "streams" && page instanceof StreamsView && route.id && route.id === page.streamId && route.tab) {
      page.showTab(route.tab);
      return;
    }
    page.unmount?.();
    try {
      if (route.page === "data") {
        const view = new DataView();
        page = view;
        await view.mount(app);
      } else if (route.page === "help") {
        const view = route.id === "operator" ? new HelpOperatorView() : new HelpView();
        page = view;
        await view.mount(app);
      } else if (route.page === "research") {
        const view = new ResearchView(route.id);
        page = view;
        await view.mount(app);
      } else if (route.page === "streams") {
        const view = new StreamsView(workflow, route.id, route.tab);
        page = view;
        await view.mount(app);
      } else {
        const view = new ChatView(workflow);
        page = view;
        await view.mount(app);
      }
    } catch (error) {
      replace(app, h("p", { class: "error", role: "alert" }, `This screen could not be loaded: ${(error as Error).message}`));
    }
  };
  const go = async (hash: string): Promise<Page> => {
    if (location.hash !== hash) {
      location.hash = hash;
      shown = show();
    }
    await shown;
    return page;
  };
  window.addEventListener("hashchange", () => void (shown = show()));
  shown = show();
  await shown;

  registerBuiltinCards();
  let registry: ChatRegistryJson | null = null;
  try {
    const response = await fetch("/api/assistant/registry");
    if (response.ok) registry = await response.json();
  } catch {
    /* the tray stays away without its registry */
  }
  if (!registry) return;
  const tray = new Tray(
    {
      page: () => page,
      go,
      clientAction: (action, target) => {
        const current = parse(location.hash);
        if (action === "navigate" && target) location.hash = `#${target}`;
        else if (action === "open_stream" && target) location.hash = `#streams/${target}`;
        else if (action === "open_research" && target) location.hash = `#research/${target}`;
        else if (action === "show_tab" && target && current.page === "streams" && page instanceof StreamsView) location.hash = `#streams/${page.streamId ?? ""}/${target}`;
      },
    },
    registry,
  );
  const header = document.querySelector<HTMLElement>(".top")!;
  // The tray's column starts where the header ends, however tall its font makes it.
  new ResizeObserver(() => document.documentElement.style.setProperty("--top-height", `${header.offsetHeight}px`)).observe(header);
  await tray.mount(header);
}

void main();

//! Entry point of the browser app: loads the wasm package, then shows the guided chat or the
//! research dashboard depending on the URL hash (#chat, #research).

import init, { Workflow } from "../../crates/wasm/pkg/stepwise.js";
import { ChatView } from "./chat.js";
import { h, replace } from "./dom.js";
import { ResearchView } from "./research.js";

async function main(): Promise<void> {
  const app = document.getElementById("app")!;
  try {
    await init({ module_or_path: "/pkg/stepwise_bg.wasm" });
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
  let research: ResearchView | null = null;
  const show = async () => {
    const view = location.hash === "#research" ? "research" : "chat";
    for (const tab of ["chat", "research"]) {
      const link = document.getElementById(`tab-${tab}`)!;
      if (tab === view) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    research?.unmount();
    research = null;
    try {
      if (view === "research") {
        research = new ResearchView();
        await research.mount(app);
      } else {
        await new ChatView(workflow).mount(app);
      }
    } catch (error) {
      replace(app, h("p", { class: "error", role: "alert" }, `This screen could not be loaded: ${(error as Error).message}`));
    }
  };
  window.addEventListener("hashchange", () => void show());
  await show();
}

void main();

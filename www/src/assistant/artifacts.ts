//! The artifact browser in the tray ("Context"): what the assistant can read of the stream and
//! the job in view, by phase, with sizes (`GET /api/assistant/artifacts`); "Show" reads one's
//! text as the model would (`?key_path=`, redacted, its first 4,000 characters). While a context
//! card waits, each artifact can be attached to it with one click.

import { api } from "../api.js";
import { h, replace } from "../dom.js";

/** An artifact as the server lists it. */
interface Artifact {
  key_path: string;
  phase: number;
  artifact_type: string;
  title: string;
  chars: number;
}

/** An artifact's text as the server slices it. */
interface Excerpt {
  text: string;
  end: number;
  total_chars: number;
}

/** Shows (or hides again) the text of the artifact at `keyPath` under its row `item`. */
async function toggleText(item: HTMLElement, keyPath: string, button: HTMLButtonElement): Promise<void> {
  item.querySelector(".artifact-error")?.remove();
  const shown = item.querySelector<HTMLElement>(".artifact-text");
  if (shown) {
    shown.remove();
    button.textContent = "Show";
    return;
  }
  button.disabled = true;
  try {
    const excerpt = await api<Excerpt>("GET", `/api/assistant/artifacts?${new URLSearchParams({ key_path: keyPath })}`);
    const more = excerpt.end < excerpt.total_chars ? `\n… (the first ${excerpt.end.toLocaleString("en")} of ${excerpt.total_chars.toLocaleString("en")} characters)` : "";
    item.append(h("pre", { class: "artifact-text" }, excerpt.text + more));
    button.textContent = "Hide";
  } catch (error) {
    item.append(h("p", { class: "error artifact-error", role: "alert" }, (error as Error).message));
  } finally {
    button.disabled = false;
  }
}

/** Where an artifact can go: the waiting card's open slots, if any. */
export interface AttachTarget {
  /** Attaches the artifact at `keyPath` to the card's best-matching open slot. */
  attach(keyPath: string, artifactType: string): void;
}

/** Fills `panel` with the artifacts of `streamId` and `researchId`; `target()` is the waiting
 * card, if one waits. */
export async function showArtifacts(panel: HTMLElement, ids: { streamId?: string; researchId?: string }, target: () => AttachTarget | null): Promise<void> {
  if (!ids.streamId && !ids.researchId) {
    return replace(panel, h("p", { class: "muted" }, "Open a saved stream or a research job to see what the assistant can read of it."));
  }
  replace(panel, h("p", { class: "muted" }, "Loading…"));
  const params = new URLSearchParams();
  if (ids.streamId) params.set("stream_id", ids.streamId);
  if (ids.researchId) params.set("research_id", ids.researchId);
  try {
    const { artifacts } = await api<{ artifacts: Artifact[] }>("GET", `/api/assistant/artifacts?${params}`);
    const phases = [...new Set(artifacts.map((a) => a.phase))];
    replace(panel, h("h3", {}, "What the assistant can read"),
      ...(artifacts.length ? phases.map((phase) => h("section", { "aria-label": `Phase ${phase}` },
        h("h4", {}, `Phase ${phase}`),
        h("ul", {}, ...artifacts.filter((a) => a.phase === phase).map((a) => {
          const item = h("li", { "data-key-path": a.key_path },
            h("span", {}, a.title), h("span", { class: "muted" }, ` ${a.artifact_type.replace(/_/g, " ")}, ${a.chars.toLocaleString("en")} characters `));
          const show = h("button", { class: "btn link", type: "button", "data-action": "show-artifact" }, "Show");
          show.onclick = () => void toggleText(item, a.key_path, show);
          item.append(show);
          if (target()) item.append(h("button", { class: "btn link", type: "button", "data-action": "attach-artifact", onclick: () => target()?.attach(a.key_path, a.artifact_type) }, "Attach"));
          return item;
        })))) : [h("p", { class: "muted" }, "Nothing yet.")]));
  } catch (error) {
    replace(panel, h("p", { class: "error", role: "alert" }, (error as Error).message));
  }
}

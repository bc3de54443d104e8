//! The tray's two panels above its log, one open at a time: History (the owner's past
//! conversations, one picked to show) and Context (what the assistant can read of the stream and
//! job in view, attachable to a waiting card).

import type { ChatContext } from "../../../crates/wasm/pkg/stepwise.js";
import { h } from "../dom.js";
import { showArtifacts, type AttachTarget } from "./artifacts.js";
import { listConversations } from "./history.js";

export class TrayPanels {
  readonly history = h("div", { class: "tray-history", hidden: true });
  readonly artifacts = h("div", { class: "tray-history tray-artifacts", hidden: true });

  /** `context`: the page's; `target`: a card waiting for context, if any; `pick`: shows a
   * conversation picked in History. */
  constructor(private readonly context: () => ChatContext, private readonly target: () => AttachTarget | null, private readonly pick: (id: string) => void) {}

  /** Opens or closes Context. */
  async toggleArtifacts(): Promise<void> {
    this.artifacts.hidden = !this.artifacts.hidden;
    if (this.artifacts.hidden) return;
    this.history.hidden = true;
    const context = this.context();
    await showArtifacts(this.artifacts, { streamId: context.stream_id ?? undefined, researchId: context.report_id ?? undefined }, this.target);
  }

  /** Opens or closes History. */
  async toggleHistory(): Promise<void> {
    this.artifacts.hidden = true;
    this.history.hidden = !this.history.hidden;
    if (!this.history.hidden) await listConversations(this.history, (id) => ((this.history.hidden = true), this.pick(id)));
  }
}

//! A context request card in the tray (context-handshake.md §4.3): what the assistant needs
//! ("Needs: Phase 3 points of interest of the research job"), with one-click suggested excerpts,
//! a note to attach, Skip per slot, "Run without context", and the countdown to the SLA after
//! which the answer comes without it. Supplies go to `POST /api/assistant/context-supply`; once
//! the required slots are met the answer comes back and replaces the card.

import type { AssistantResponse } from "../../../crates/wasm/pkg/stepwise.js";
import { api } from "../api.js";
import { h, replace } from "../dom.js";

/** A slot as the server sends it. */
export interface RequestSlot {
  slot: string;
  phase: number;
  artifact_type: string;
  urgency: "required" | "optional";
  description: string;
  state: "open" | "supplied" | "skipped";
  /** What was given, and by whom. */
  supply?: { by: "system" | "user"; key_path?: string | null } | null;
  suggestions?: { key_path: string; title: string; excerpt: string }[];
}

/** A context request as the server sends it. */
export interface ContextRequestJson {
  request_id: string;
  user_message_id: string;
  created_at: number;
  sla_ms: number;
  status: "open" | "resolved" | "forced" | "fell_back";
  slots: RequestSlot[];
}

/** One line on what a past request got: each slot's outcome, then how it ended. */
export function requestSummary(request: ContextRequestJson): string {
  const slots = request.slots.map((slot) => {
    const what = slot.description.replace(/\s*\(.*\)$/, "");
    const got = slot.state === "skipped" ? "skipped" : !slot.supply ? "not given" : slot.supply.by === "user" ? "attached by you" : "supplied automatically";
    return `${what}: ${got}`;
  });
  const ended = request.status === "forced" ? " (answered without the rest)" : request.status === "fell_back" ? " (the wait ran out)" : "";
  return `Context: ${slots.join("; ")}${ended}.`;
}

/** What a card says when its request ended elsewhere (another tab, the alarm). */
const ENDED: Record<Exclude<ContextRequestJson["status"], "open">, string> = {
  resolved: "Context delivered.",
  forced: "Run without the context.",
  fell_back: "The wait ran out: run without it.",
};

type Answered = { status: "answered"; answer: AssistantResponse } | { status: "waiting_context"; request: ContextRequestJson };

/** The card of one request of conversation `conversationId`; `onAnswer` gets the answer. */
export class RequestCard {
  readonly root = h("div", { class: "msg request-card", role: "group", "aria-label": "The assistant needs context" });
  private readonly status = h("p", { class: "muted request-status", "aria-live": "polite" });
  private timer: number | undefined;
  /** The answer came back to this tab's own supply or force. */
  private answered = false;

  constructor(private readonly conversationId: string, private request: ContextRequestJson, private readonly onAnswer: (answer: AssistantResponse) => void) {
    this.render();
    this.timer = window.setInterval(() => this.tick(), 1000);
  }

  /** The request changed elsewhere (another tab, the alarm). */
  update(request: ContextRequestJson): void {
    if (this.answered) return; // This tab's own supply or force said how it ended.
    this.request = request;
    if (request.status === "open") this.render();
    else this.close(ENDED[request.status]);
  }

  /** Whether the request still waits for something. */
  waiting(): boolean {
    return !this.answered && this.request.status === "open" && this.request.slots.some((s) => s.state === "open");
  }

  /** Attaches an artifact (from the artifact browser) to the open slot of its type, else the
   * first open one. */
  attach(keyPath: string, artifactType: string): void {
    const open = this.request.slots.filter((s) => s.state === "open");
    const slot = open.find((s) => s.artifact_type === artifactType) ?? open[0];
    if (slot) void this.supply({ payloads: [{ slot: slot.slot, key_path: keyPath }] });
  }

  /** The reminder at half the SLA. */
  remind(): void {
    this.root.classList.add("reminded");
    this.status.textContent = "Reminder: the assistant is still waiting for this.";
  }

  private render(): void {
    const open = this.request.slots.filter((s) => s.state === "open");
    // Every slot met and the request open again: the answer to what was given failed, and it
    // may be asked again (the server keeps what was given; running without it would not fit).
    const retry = open.length === 0 && this.request.slots.length > 0;
    replace(this.root,
      h("h4", {}, "The assistant needs context"),
      ...open.map((slot) => this.slotView(slot)),
      retry
        ? h("div", { class: "actions" }, h("p", {}, "The context was delivered, but the answer to it failed."), h("button", { class: "btn", type: "button", "data-action": "answer-again", onclick: () => void this.supply({}) }, "Answer with it again"))
        : h("div", { class: "actions" }, h("button", { class: "btn secondary", type: "button", "data-action": "force", onclick: () => void this.force() }, "Run without context")),
      this.status);
    this.tick();
  }

  private slotView(slot: RequestSlot): HTMLElement {
    const note = h("textarea", { rows: 2, maxlength: 20000, "aria-label": `Note for: ${slot.description}`, placeholder: "Paste an excerpt or write a note…" });
    return h("div", { class: "request-slot", "data-slot": slot.slot },
      h("p", {}, h("strong", {}, `Needs: Phase ${slot.phase} `), slot.description, slot.urgency === "optional" ? " (optional)" : ""),
      ...(slot.suggestions ?? []).map((s) => h("div", { class: "suggestion" },
        h("pre", { class: "excerpt" }, s.excerpt.slice(0, 300)),
        h("button", { class: "btn", type: "button", "data-action": "attach-suggested", onclick: () => void this.supply({ payloads: [{ slot: slot.slot, key_path: s.key_path }] }) }, "Attach suggested excerpt"))),
      note,
      h("div", { class: "actions" },
        h("button", { class: "btn", type: "button", "data-action": "attach-note", onclick: () => note.value.trim() && void this.supply({ payloads: [{ slot: slot.slot, text: note.value }] }) }, "Attach a note"),
        h("button", { class: "btn link", type: "button", "data-action": "skip", onclick: () => void this.supply({ skip: [slot.slot] }) }, "Skip")));
  }

  private tick(): void {
    if (this.request.status !== "open" || this.root.classList.contains("reminded")) return;
    const left = Math.ceil(Math.max(0, this.request.created_at + this.request.sla_ms - Date.now()) / 1000);
    const met = this.request.slots.every((s) => s.state !== "open");
    this.status.textContent = met ? `Answered with it on its own in ${left} s.` : `Answers without it in ${left} s.`;
  }

  private async supply(body: Record<string, unknown>): Promise<void> {
    this.status.textContent = "Sending…";
    try {
      const answered = await api<Answered>("POST", "/api/assistant/context-supply", { conversation_id: this.conversationId, request_id: this.request.request_id, ...body });
      if (answered.status === "answered") {
        const delivered = "payloads" in body || this.request.slots.some((s) => s.state === "supplied");
        const skipped = "skip" in body;
        return this.done(answered.answer, delivered ? (skipped ? "Context delivered; the rest skipped." : "Context delivered.") : "Skipped: answered without it.");
      }
      this.request = answered.request;
      this.render();
      this.status.textContent = "Delivered; the assistant still needs the rest.";
    } catch (error) {
      if (this.stopped(error as Error)) return;
      // The model's failure: what was given is kept (the request is open again, and every tab's
      // card, this one's too, is told it to offer the answer again).
      const { message } = error as Error;
      const failed = /\((timeout|rate_limited|auth|upstream_error|bad_stream|answer_too_long)\)$/.test(message);
      this.status.textContent = failed ? `Delivered, but the answer failed: ${message}` : `Not delivered: ${message} Try again.`;
    }
  }

  private async force(): Promise<void> {
    this.status.textContent = "Answering without it…";
    try {
      const answered = await api<Answered>("POST", `/api/assistant/conversations/${this.conversationId}/requests/${this.request.request_id}/force`);
      if (answered.status === "answered") this.done(answered.answer, "Answered without the context.");
    } catch (error) {
      if (this.stopped(error as Error)) return;
      this.status.textContent = `${(error as Error).message} Try again.`;
    }
  }

  /** A message typed while this card waits: it stays in the composer, and the card says why. */
  hold(): void {
    this.root.classList.add("reminded");
    this.status.textContent = "Your message is kept in the box below: attach, skip or run without context first, then send it.";
  }

  /** The resumed turn was stopped (here or in another tab): the card closes, nothing to retry. */
  private stopped(error: Error): boolean {
    if (!error.message.endsWith("(turn_stopped)")) return false;
    this.answered = true;
    this.close("Stopped: what the assistant wrote is kept.");
    return true;
  }

  private done(answer: AssistantResponse, outcome: string): void {
    this.answered = true;
    this.close(outcome);
    this.onAnswer(answer);
  }

  private close(text: string): void {
    window.clearInterval(this.timer);
    replace(this.root, h("p", { class: "muted" }, text));
  }
}

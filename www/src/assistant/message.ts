//! One assistant answer on screen: "Thinking…" (a status screen readers announce) until
//! something shows, text as it streams (the model's own text parsed by the wasm `MarkerStream`
//! with the page's payload markers, so no marker syntax is ever shown and a placeholder appears
//! as soon as a card's marker closes), tool rows with live progress, then the authoritative
//! `complete` answer: its text, its cards (checked by the server against their schemas, shown as
//! the owner left them: accepted, dismissed or failed), chips and action buttons, and a tool call
//! held for approval (`approval.ts`); or, for a turn stopped or interrupted, the text it got to,
//! marked so.

import { MarkerStream, type Approval, type AssistantResponse, type CardOutcome, type CardState, type MarkerEvent, type Payload, type StreamEvent, type SuggestedAction, type SuggestedValue } from "../../../crates/wasm/pkg/stepwise.js";
import { h, replace } from "../dom.js";
import { type ApprovalActions, ApprovalCard } from "./approval.js";
import { showCardState } from "./cards.js";
import { type PayloadHost, payloadHandler } from "./payloads.js";

/** What the buttons of an answer do. */
export interface AnswerActions {
  /** A chip: sends its value as the next message. */
  send(value: string): void;
  /** An action button. */
  act(action: SuggestedAction): void;
  /** Where cards apply. */
  host: PayloadHost;
  /** Keeps what the owner did with card `payload` of `answer` (a stored answer). */
  card(answer: AnswerView, payload: number, outcome: CardOutcome, note?: string): void;
  /** Decides an approval of `answer`. */
  approvals(answer: AnswerView): ApprovalActions;
}

/** Cards' stored states, by the payload's index. */
export type CardStates = Record<string, CardState>;

/** An answer being received, then shown whole. */
export class AnswerView {
  readonly root = h("div", { class: "msg assistant", "aria-busy": "true" });
  private readonly text = h("div", { class: "text" });
  private readonly tools = h("ul", { class: "tool-rows", "aria-label": "Tools" });
  private readonly extras = h("div", { class: "extras" });
  /** Says the assistant is working while nothing else shows it (no text, no running tool). */
  private readonly waiting = h("p", { class: "typing", role: "status", "aria-live": "polite" },
    h("span", { class: "typing-dots", "aria-hidden": "true" }, h("span"), h("span"), h("span")),
    h("span", { class: "typing-text" }, "Thinking…"));
  private readonly parser: MarkerStream;
  private shown = "";
  private done = false;
  /** The answer's index among the stored messages, once stored, and its conversation. */
  index: number | null = null;
  conversation: string | null = null;
  private cardViews: HTMLElement[] = [];
  private approvalCard: ApprovalCard | null = null;

  constructor(markers: string[], private readonly actions: AnswerActions) {
    this.parser = new MarkerStream(markers);
    this.root.append(this.waiting, this.tools, this.text, this.extras);
  }

  /** Shows a turn event that needs nothing but this answer (status, text, tool progress, an
   * error, a Stop); false for any other. */
  apply(event: StreamEvent): boolean {
    if (event.type === "status") this.status(event.message);
    else if (event.type === "model_delta") this.model(event.text);
    else if (event.type === "text_delta") this.display(event.text);
    else if (event.type === "tool_start") this.toolStart(event.tool);
    else if (event.type === "tool_progress") this.toolProgress(event.tool, event.message, event.progress);
    else if (event.type === "tool_complete") this.toolComplete(event.tool);
    else if (event.type === "error") this.failed(event.message, event.code);
    else if (event.type === "stopped") this.stopped(event.message);
    else return false;
    return true;
  }

  /** A `status` event: what the assistant is doing ("Thinking...", "Running …"). */
  status(message: string): void {
    this.waiting.querySelector(".typing-text")!.textContent = message.replace(/\.\.\.$/, "…");
    this.refreshWaiting();
  }

  /** The indicator shows while the answer is under way and nothing else shows progress. */
  private refreshWaiting(): void {
    const visible = !this.done && !this.shown.trim() && !this.tools.querySelector(`[data-state="running"]`);
    this.waiting.hidden = !visible;
  }

  /** The model's own text (a `model_delta`). */
  model(delta: string): void {
    for (const event of this.parser.feed(delta)) this.event(event);
  }

  /** Display text already cleaned by the server (a `text_delta`). */
  display(delta: string): void {
    this.shown += delta;
    this.text.textContent = this.shown;
    this.refreshWaiting();
  }

  /** `tool_start`: a row for the call. */
  toolStart(tool: string): void {
    this.tools.append(h("li", { "data-tool": tool, "data-state": "running" }, h("span", { class: "tool-name" }, tool), h("span", { class: "tool-stage muted" }, "starting…")));
    this.refreshWaiting();
  }

  /** `tool_progress`: the running row's stage and share done. */
  toolProgress(tool: string, message: string, progress: number): void {
    const row = this.running(tool);
    if (row) row.querySelector(".tool-stage")!.textContent = `${message} (${Math.round(progress * 100)}%)`;
  }

  /** `tool_complete`. */
  toolComplete(tool: string): void {
    const row = this.running(tool);
    if (!row) return;
    row.dataset.state = "done";
    row.querySelector(".tool-stage")!.textContent = "done";
    this.refreshWaiting();
  }

  /** The authoritative answer (`states`: its cards' stored outcomes). */
  complete(answer: AssistantResponse, states: CardStates = {}): void {
    this.index = answer.message_index ?? null;
    this.finish();
    this.text.textContent = answer.message;
    for (const [i, use] of answer.tool_history.entries()) {
      const row = this.tools.children[i] as HTMLElement | undefined;
      if (row && use.is_error) {
        row.dataset.state = "failed";
        row.querySelector(".tool-stage")!.textContent = use.output.replace(/^error: /, "");
      }
    }
    this.cardViews = cards(answer.payloads ?? (answer.custom_payload ? [answer.custom_payload] : []), this.actions.host, (payload, outcome, note) => {
      this.actions.card(this, payload, outcome, note);
    });
    for (const [payload, state] of Object.entries(states)) this.cardState(Number(payload), state);
    replace(this.extras, ...this.cardViews);
    this.approvalCard = answer.approval ? new ApprovalCard(answer.approval, this.actions.approvals(this)) : null;
    if (this.approvalCard) this.extras.append(this.approvalCard.root);
    this.extras.append(...this.buttons(answer.suggested_values, answer.suggested_actions, false));
  }

  /** Shows the answer's approval as it stands now (decided here, elsewhere, or expired). */
  approvalState(approval: Approval): void {
    this.approvalCard?.update(approval);
  }

  /** Shows card `payload` as the owner left it (here, in another tab, or before a reload). */
  cardState(payload: number, state: CardState): void {
    const view = this.cardViews[payload];
    if (view) showCardState(view, state);
  }

  /** A turn its owner stopped: the text generated until then, kept. */
  stopped(text: string): void {
    this.finish();
    this.text.textContent = text;
    this.cutShort("stopped");
  }

  /** Marks a stored answer that was cut short: stopped by its owner, or interrupted. */
  cutShort(status: "stopped" | "interrupted"): void {
    this.root.dataset.status = status;
    const note = status === "stopped" ? "Stopped." : "Interrupted: the answer was cut short. Ask again to get it whole.";
    this.extras.append(h("p", { class: "muted cut-short" }, note));
  }

  /** A turn that failed: the reason, with its code. */
  failed(message: string, code: string): void {
    this.finish();
    this.extras.append(h("p", { class: "error", role: "alert", "data-code": code }, `${message} (${code})`));
  }

  /** The answer is whole (or failed): no longer busy. */
  private finish(): void {
    this.done = true;
    this.waiting.remove();
    this.root.removeAttribute("aria-busy");
  }

  private event(event: MarkerEvent): void {
    if (event.type === "text") {
      this.display(event.text);
    } else if (event.type === "marker" && event.kind === "payload") {
      // A card is drawn from the complete answer only: the server checks it against its schema
      // first. Until then, a placeholder says one is coming.
      this.extras.append(h("p", { class: "payload pending muted" }, "Preparing a card…"));
    } else if (event.type === "marker" && event.kind === "suggested_values") {
      this.extras.append(...this.buttons(event.value, [], true));
    }
  }

  private running(tool: string): HTMLElement | null {
    return [...this.tools.querySelectorAll<HTMLElement>(`[data-state="running"]`)].find((row) => row.dataset.tool === tool) ?? null;
  }

  /** Chips and action buttons (disabled while the answer streams). */
  private buttons(values: SuggestedValue[], actions: SuggestedAction[], streaming: boolean): HTMLElement[] {
    const out: HTMLElement[] = [];
    if (values.length) {
      out.push(h("div", { class: "chips", role: "group", "aria-label": "Suggestions" }, ...values.map((v) => h("button", { class: "chip", type: "button", disabled: streaming, title: v.value, onclick: () => this.actions.send(v.value) }, v.label))));
    }
    if (actions.length) {
      out.push(h("div", { class: "actions", role: "group", "aria-label": "Actions" }, ...actions.map((a) => h("button", { class: "btn secondary", type: "button", "data-action": a.action, onclick: () => this.actions.act(a) }, a.label))));
    }
    return out;
  }
}

/** The cards of `payloads`, from the handler registry; `report` is told what the owner does
 * with each (by its index). */
export function cards(payloads: Payload[], host: PayloadHost, report: (payload: number, outcome: CardOutcome, note?: string) => void): HTMLElement[] {
  return payloads.map((payload, index) => {
    const handler = payloadHandler(payload.type);
    if (!handler) return h("div", { class: "payload", "data-type": payload.type }, h("h4", {}, payload.type), h("pre", {}, JSON.stringify(payload.data, null, 2)));
    let element: HTMLElement;
    const callbacks = handler.accept
      ? {
          onAccept: async () => {
            try {
              await handler.accept!(payload.data, host);
            } catch (error) {
              report(index, "failed", (error as Error).message);
              throw error;
            }
            report(index, "accepted");
          },
          onDismiss: () => (showCardState(element, { outcome: "dismissed", at: Date.now() }), report(index, "dismissed")),
        }
      : undefined;
    element = handler.render(payload.data, callbacks);
    return element;
  });
}

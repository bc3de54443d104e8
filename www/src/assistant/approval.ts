//! The approval card: a tool call the assistant held for the owner's approval (what it will do,
//! its estimated model calls, when it expires), with Approve, Edit (the arguments as JSON,
//! checked by the server against the tool's schema) and Deny (with a reason the assistant reads).
//! Every tab shows it, and after a reload it comes back as it was left: approved (with edits,
//! by whom, when, and what the call returned), denied (and why) or expired; half way to its
//! deadline it says it is still waiting.

import type { Approval } from "../../../crates/wasm/pkg/stepwise.js";
import { h, replace } from "../dom.js";

/** What the card's buttons do. */
export interface ApprovalActions {
  /** Approves, with `edited` arguments when the owner changed them; the run streams as a turn. */
  approve(approval: Approval, edited?: Record<string, unknown>): Promise<void>;
  /** Denies with `reason`; the stored approval comes back. */
  deny(approval: Approval, reason: string): Promise<Approval>;
}

const time = (ms: number) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

/** One approval on screen. */
export class ApprovalCard {
  readonly root = h("div", { class: "approval-card payload", role: "group", "aria-label": "Approval" });
  private readonly status = h("p", { class: "card-status", "aria-live": "polite" });
  /** The status line holds only while the approval waits ("Denying…", "approve again"). */
  private statusWhilePending = false;

  constructor(private approval: Approval, private readonly actions: ApprovalActions) {
    this.render();
  }

  /** The approval as stored now (decided here, in another tab, or expired). */
  update(approval: Approval): void {
    if (approval.id !== this.approval.id) return;
    const reminderOnly = approval.state === "pending" && this.approval.state === "pending";
    this.approval = approval;
    // A reminder changes the waiting line only: an edit or a reason being typed stays.
    if (reminderOnly) return this.showWait();
    if (approval.state !== "pending" && this.statusWhilePending) this.say("", null);
    this.render();
  }

  private showWait(): void {
    const a = this.approval;
    const line = this.root.querySelector<HTMLElement>(".approval-wait");
    if (!line) return;
    line.className = a.reminded ? "approval-wait reminded" : "approval-wait muted";
    line.textContent = a.reminded ? `Still waiting for you: it expires at ${time(a.expires_at)}.` : `Waits for you until ${time(a.expires_at)}.`;
  }

  private render(): void {
    const a = this.approval;
    this.root.dataset.state = a.state;
    this.root.dataset.tool = a.tool;
    const title = { pending: "Approval needed", approved: "Approved", denied: "Denied", expired: "Expired" }[a.state];
    const parts: (HTMLElement | string)[] = [h("h4", {}, title), h("p", { class: "approval-summary" }, a.summary)];
    if (a.state === "pending") {
      // The summary says what it costs (estimated model calls) when it costs any.
      // Half its time gone, the server reminds every tab (`showWait`).
      parts.push(h("p", { class: "approval-wait" }), this.buttons());
    } else {
      parts.push(h("p", { class: "muted approval-outcome" }, this.outcome()));
      if (a.result) parts.push(h("p", { class: `approval-result${a.result.is_error ? " error" : ""}` }, a.result.output));
    }
    replace(this.root, ...parts, this.status);
    this.showWait();
  }

  /** Who decided what, and when. */
  private outcome(): string {
    const a = this.approval;
    const when = a.decided_at ? ` at ${time(a.decided_at)}` : "";
    const by = a.decided_by && a.decided_by !== "owner" ? ` by ${a.decided_by}` : "";
    if (a.state === "approved") return `Approved${a.edited_arguments ? " with edits" : ""}${by}${when}.${a.result ? "" : " Running…"}`;
    if (a.state === "denied") return `Denied${by}${when}: ${a.reason ?? "no reason given"}.`;
    return "Expired: nobody answered in time, so it did not run.";
  }

  private buttons(): HTMLElement {
    const editor = h("textarea", { class: "approval-arguments", rows: 6, "aria-label": "Arguments (JSON)", spellcheck: "false" }) as HTMLTextAreaElement;
    const reason = h("input", { class: "approval-reason", type: "text", maxlength: 500, placeholder: "Why not? (the assistant reads it)", "aria-label": "Reason" }) as HTMLInputElement;
    const editBox = h("div", { class: "approval-edit", hidden: true }, editor, h("button", { class: "btn", type: "button", onclick: () => void this.approveEdited(editor.value) }, "Approve edited"));
    const denyBox = h("div", { class: "approval-deny", hidden: true }, reason, h("button", { class: "btn secondary", type: "button", onclick: () => void this.deny(reason.value) }, "Deny"));
    return h("div", {},
      h("div", { class: "actions" },
        h("button", { class: "btn", type: "button", "data-decision": "approve", onclick: () => void this.approve() }, "Approve"),
        h("button", { class: "btn secondary", type: "button", "data-decision": "edit", onclick: () => {
          editor.value = JSON.stringify(this.approval.arguments, null, 2);
          editBox.hidden = !editBox.hidden;
          denyBox.hidden = true;
          if (!editBox.hidden) editor.focus();
        } }, "Edit"),
        h("button", { class: "btn secondary", type: "button", "data-decision": "deny", onclick: () => {
          denyBox.hidden = !denyBox.hidden;
          editBox.hidden = true;
          if (!denyBox.hidden) reason.focus();
        } }, "Deny…")),
      editBox, denyBox);
  }

  private async approve(edited?: Record<string, unknown>): Promise<void> {
    this.busy(true, "Approving…");
    try {
      await this.actions.approve(this.approval, edited);
      this.say("", null);
    } catch (error) {
      const { message } = error as Error;
      this.say(message, "error", TRY_AGAIN.has(message));
      this.busy(false);
    }
  }

  private async approveEdited(text: string): Promise<void> {
    let edited: unknown;
    try {
      edited = JSON.parse(text);
    } catch {
      return this.say("The arguments are not valid JSON.", "error");
    }
    if (!edited || typeof edited !== "object" || Array.isArray(edited)) return this.say("The arguments must be a JSON object.", "error");
    // The same arguments, written another way, are no edit.
    const same = canonical(edited) === canonical(this.approval.arguments);
    await this.approve(same ? undefined : (edited as Record<string, unknown>));
  }

  private async deny(reason: string): Promise<void> {
    this.busy(true, "Denying…");
    try {
      this.update(await this.actions.deny(this.approval, reason.trim()));
    } catch (error) {
      this.say((error as Error).message, "error");
      this.busy(false);
    }
  }

  private busy(busy: boolean, text = ""): void {
    for (const button of this.root.querySelectorAll<HTMLButtonElement>("button")) button.disabled = busy;
    if (text) this.say(text, "pending");
  }

  /** Shows `text` on the status line; `whilePending`: it goes once the approval is decided
   * (here or elsewhere), as work in progress does. */
  private say(text: string, kind: "pending" | "error" | null, whilePending = kind === "pending"): void {
    this.statusWhilePending = whilePending;
    this.status.textContent = text;
    this.status.className = kind ? `card-status ${kind}` : "card-status";
    if (kind) this.status.setAttribute("data-kind", kind);
    else this.status.removeAttribute("data-kind");
  }
}

/** JSON with its objects' keys sorted: equal for equal values, whatever the order written. */
function canonical(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sorted) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])])) : v;
  return JSON.stringify(sorted(value));
}

/** What an approval pressed while this tab's own answer is being written says on its card. */
export const WAIT_FOR_ANSWER = "Wait for the answer being written, then approve.";

/** What a refused approval says on its card. */
export function approvalRefusal(code: string): string {
  const known: Record<string, string> = {
    approval_settled: "It was decided already (here or in another tab); it runs at most once.",
    approval_expired: "It expired before it was answered.",
    turn_in_progress: "Another answer is being written; approve again when it is done.",
    waiting_stopped: "It was stopped while it waited for the answer being written; approve again.",
  };
  return known[code] ?? `The approval was refused (${code}).`;
}

/** Refusals that ask for the approval again: stale once it is decided. */
const TRY_AGAIN = new Set([WAIT_FOR_ANSWER, approvalRefusal("turn_in_progress"), approvalRefusal("waiting_stopped")]);

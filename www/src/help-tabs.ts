//! The Help page's live connection: its session's WebSocket, open while the page shows a session,
//! so a question asked in another tab (or window) shows here too, its answer streaming in as it
//! does there, and an answer, a handoff or a close made elsewhere shows without a reload. The
//! server only says that something happened (`help:turn_started`, `help:changed`); the page then
//! joins the turn's event stream or reads the session again, as it does after a reload. The
//! questions waiting behind the running turn come whole whenever they change (`help:waiting`),
//! and one that could not begin is named (`help:not_begun`). A turn is joined by its number.

import { LiveConnection, type LiveEvent } from "./assistant/live.js";
import { authHeaders } from "./owner.js";

/** Joins help session `id`'s turn after event `after`: its events, `"ended"` when there is
 * nothing to join (the session holds how it ended), or `null` when the server was not reached. */
export async function joinTurn(id: string, after?: string): Promise<ReadableStream<Uint8Array> | "ended" | null> {
  const headers = authHeaders(after ? { "last-event-id": after } : {});
  const response = await fetch(`/api/help/sessions/${id}/stream`, { headers }).catch(() => null);
  if (!response) return null;
  if (response.status === 204 || response.status === 404) return "ended";
  return response.ok && response.body ? response.body : null;
}

/** Whether the server holds help session `id` for this owner (a first question stopped or
 * failed left none); taken to, when it cannot be asked. */
export async function sessionHeld(id: string): Promise<boolean> {
  const response = await fetch(`/api/help/sessions/${id}`, { headers: authHeaders() }).catch(() => null);
  return response?.status !== 404;
}

/** What the page does when its session changes elsewhere. */
export interface HelpTabHooks {
  /** A turn began with `message`: joined after event `after` (every event of it comes);
   * `waitingId`: the id the question waited under in the line, when it waited. */
  started(message: string, after: number, waitingId: string | null): Promise<void>;
  /** What the session shows changed (an answer, a handoff, a close): read it again. */
  changed(): Promise<void>;
  /** The questions waiting behind the running turn now (`help:waiting`'s `messages`). */
  waiting(messages: unknown): void;
  /** The question that waited as `id` (`content`) could not begin (`why`): `help:not_begun`. */
  notBegun(id: string, why: string, content: string): void;
}

/** The WebSocket of one help session; the page's hooks are called one at a time, in order. */
export class HelpTabs {
  private readonly connection: LiveConnection;
  private queue: Promise<void> = Promise.resolve();
  /** Times the socket caught up (after the first, it was opened again). */
  private connected = 0;

  constructor(readonly id: string, private readonly hooks: HelpTabHooks) {
    this.connection = new LiveConnection(id, () => 0, (event) => this.handle(event), undefined, `/api/help/sessions/${id}/ws`);
  }

  /** Closes the connection (the page shows another session, or none). */
  close(): void {
    this.connection.close();
  }

  private handle(live: LiveEvent): void {
    // The help desk's messages: `{type, message, after}` and `{type}`.
    const event = live as unknown as { type: string; message?: unknown; after?: number; waiting_id?: unknown; content?: unknown };
    const hooks = this.hooks;
    let next: (() => Promise<void>) | null = null;
    if (event.type === "help:waiting") return hooks.waiting((live as unknown as { messages?: unknown }).messages);
    if (event.type === "help:not_begun" && typeof event.waiting_id === "string") return hooks.notBegun(event.waiting_id, String(event.message ?? ""), String(event.content ?? ""));
    if (event.type === "help:turn_started" && typeof event.message === "string") {
      const [message, after, waiting] = [event.message, event.after ?? 0, typeof event.waiting_id === "string" ? event.waiting_id : null];
      next = () => hooks.started(message, after, waiting);
    } else if (event.type === "help:changed" || (event.type === "help:caught_up" && this.connected++ > 0)) {
      // A change, or a connection opened again (what changed while it was down is not sent).
      next = () => hooks.changed();
    }
    if (next) this.queue = this.queue.then(next).catch(() => {});
  }
}

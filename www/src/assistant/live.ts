//! The live connection of the conversation the tray shows: its WebSocket, open for as long as the
//! conversation is on screen, so a turn started in another tab (or resumed by the server) streams
//! here too. On every (re)connection it asks for the turn events it missed (`resume` after the
//! last sequence number the tray saw); a dropped socket is opened again after a pause.

import { ownerToken } from "../owner.js";
import type { ContextRequestJson } from "./request.js";

/** What the conversation's object sends (`conversation:*` events). */
export interface LiveEvent {
  type: string;
  seq?: number;
  lease?: number;
  event?: { type: string; [key: string]: unknown };
  message?: { role: string; content: string; action?: string | null; [key: string]: unknown } | null;
  request?: ContextRequestJson;
  running?: boolean;
}

/** A turn's events are numbered `lease × SEQ_SPAN + n`. */
export const SEQ_SPAN = 1_000_000;

/** The lease of the turn an event belongs to (0 for events of no turn). */
export function leaseOf(event: LiveEvent): number {
  if (event.type === "conversation:turn_started") return event.lease ?? 0;
  return event.seq ? Math.floor(event.seq / SEQ_SPAN) : 0;
}

/** Wait before opening a dropped socket again, in ms. */
const RECONNECT_MS = 1000;

/** A conversation's WebSocket, reopened when it drops. */
export class LiveConnection {
  private socket: WebSocket | null = null;
  private closed = false;

  /** Opens the socket of conversation `id`; `after()` is the last sequence number seen. */
  constructor(readonly id: string, private readonly after: () => number, private readonly handle: (event: LiveEvent) => void) {
    this.open();
  }

  private open(): void {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/assistant/conversations/${this.id}/ws`;
    const socket = new WebSocket(url, ["stepwise.v1", `bearer.${ownerToken()}`]);
    this.socket = socket;
    socket.addEventListener("open", () => this.resume());
    socket.addEventListener("message", (message) => {
      try {
        this.handle(JSON.parse(String(message.data)) as LiveEvent);
      } catch {
        // Not an event (a `pong`).
      }
    });
    socket.addEventListener("close", () => {
      if (this.socket === socket && !this.closed) setTimeout(() => this.closed || this.open(), RECONNECT_MS);
    });
  }

  /** Asks for the running turn's events after the last one seen. */
  resume(): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: "resume", after: this.after() }));
  }

  /** Closes the socket for good. */
  close(): void {
    this.closed = true;
    this.socket?.close();
  }
}

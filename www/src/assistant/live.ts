//! The live connection of the conversation the tray shows: its WebSocket, open for as long as the
//! conversation is on screen, so a turn started in another tab (or resumed by the server) streams
//! here too. On every (re)connection it asks for the turn events it missed (`resume` after the
//! last sequence number the tray saw) and hands them on in order, each once, with the live ones
//! that came meanwhile; a dropped socket is opened again after a pause, longer after each open
//! that was refused, until five in a row were.

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
  /** `conversation:waiting`'s line. */
  messages?: unknown;
  /** Set here on the first `caught_up` after the socket dropped, or after opens of it were
   * refused before it first opened: a turn that began and ended meanwhile is told by nothing else. */
  reconnected?: boolean;
  /** The id `conversation:turn_started`'s message waited under in the line, if it waited. */
  waiting_id?: string;
}

/** A turn's events are numbered `lease × SEQ_SPAN + n`. */
export const SEQ_SPAN = 1_000_000;

/** The lease of the turn an event belongs to (0 for events of no turn). */
export function leaseOf(event: LiveEvent): number {
  if (event.type === "conversation:turn_started") return event.lease ?? 0;
  return event.seq ? Math.floor(event.seq / SEQ_SPAN) : 0;
}

/** Wait before opening a dropped socket again, in ms; doubled after each open that failed. */
const RECONNECT_MS = 1000;
/** Opens that fail in a row (refused: a conversation gone, a token no longer valid) before the
 * connection gives up. */
const MAX_FAILED_OPENS = 5;

/** A conversation's WebSocket, reopened when it drops. */
export class LiveConnection {
  private socket: WebSocket | null = null;
  private closed = false;
  /** Turn events held from (re)connection until `caught_up`: the object may send a live event
   * before the replay of those before it, so they are handed on sorted, each once. */
  private held: LiveEvent[] | null = null;
  /** Opens in a row that closed before they opened. */
  private failures = 0;
  /** Whether the last open's `caught_up` has come, and whether a socket closed (or an open was
   * refused) since the last `caught_up`. */
  private caughtUp = false;
  private dropped = false;
  /** Called when an open is refused (closed before it opened): the conversation may be gone. */
  onRefused: (() => void) | null = null;
  /** Set when it gave up after MAX_FAILED_OPENS: the browser coming back online opens it again. */
  private gaveUp = false;
  private readonly online = (): void => {
    if (!this.gaveUp || this.closed) return;
    this.gaveUp = false;
    this.failures = 0;
    this.open();
  };

  /** Opens the socket of conversation `id`; `after()` is the last sequence number seen. A
   * guided conversation's (`guidedToken`: its token) is at `/api/conversations/:id/ws`; `path`
   * names another route (a help session's). */
  constructor(readonly id: string, private readonly after: () => number, private readonly handle: (event: LiveEvent) => void, private readonly guidedToken?: string, private readonly path?: string) {
    addEventListener("online", this.online);
    this.open();
  }

  private open(): void {
    const path = this.path ?? (this.guidedToken ? `/api/conversations/${this.id}/ws` : `/api/assistant/conversations/${this.id}/ws`);
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
    const protocols = ["stepwise.v1", `bearer.${ownerToken()}`, ...(this.guidedToken ? [`token.${this.guidedToken}`] : [])];
    const socket = new WebSocket(url, protocols);
    this.socket = socket;
    let opened = false;
    socket.addEventListener("open", () => {
      opened = true;
      this.failures = 0;
      this.caughtUp = false;
      this.resume();
    });
    socket.addEventListener("message", (message) => {
      let event: LiveEvent;
      try {
        event = JSON.parse(String(message.data)) as LiveEvent;
      } catch {
        return; // Not an event (a `pong`).
      }
      if (event.type.endsWith(":caught_up") && !this.caughtUp) {
        [this.caughtUp, event.reconnected, this.dropped] = [true, this.dropped, false];
      }
      const ofTurn = event.type === "conversation:turn_started" || event.type === "conversation:turn_event";
      if (this.held && ofTurn) return void this.held.push(event);
      if (this.held && event.type.endsWith(":caught_up")) {
        const seen = new Set<string>();
        const order = (e: LiveEvent) => (e.type === "conversation:turn_started" ? leaseOf(e) * SEQ_SPAN : e.seq ?? 0);
        for (const held of this.held.sort((a, b) => order(a) - order(b))) {
          const key = `${held.type}:${order(held)}`;
          if (!seen.has(key)) (seen.add(key), this.handle(held));
        }
        this.held = null;
      }
      this.handle(event);
    });
    socket.addEventListener("close", () => {
      if (this.socket !== socket || this.closed) return;
      this.dropped = true;
      if (!opened) this.onRefused?.();
      if (!opened && ++this.failures >= MAX_FAILED_OPENS) return void (this.gaveUp = true);
      setTimeout(() => this.closed || this.open(), RECONNECT_MS * 2 ** this.failures);
    });
  }

  /** Asks for the running turn's events after the last one seen. */
  resume(): void {
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    this.held ??= [];
    this.socket.send(JSON.stringify({ type: "resume", after: this.after() }));
  }

  /** Closes the socket for good. */
  close(): void {
    this.closed = true;
    removeEventListener("online", this.online);
    this.socket?.close();
  }
}

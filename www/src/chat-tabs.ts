//! The guided chat's live connection: the conversation's WebSocket, open while the page shows a
//! stored conversation, so a turn another tab (or another window) sends streams here too: its
//! message, its answer as it is written (marker lines kept out of the text), then the stored
//! state once it ends. The page's own turns come on their own stream and are not shown twice; a
//! turn that begins while the page still reads its own (one that waited behind it) is held and
//! shown once the page's own turn has ended.

import { MarkerStream, type ChatResponse } from "../../crates/wasm/pkg/stepwise.js";
import { LiveConnection, leaseOf, type LiveEvent } from "./assistant/live.js";

/** What the page does with another tab's turn. */
export interface TabHooks {
  /** Whether the page reads a turn on its own stream now (its own, or one it rejoined). */
  reading(): boolean;
  /** The lease of the last turn the page read on its own stream (that one and those before it
   * are not another tab's to show). */
  readLease(): number;
  /** Another tab's turn began with `message`: the bubble its answer is written into. */
  began(message: string): HTMLElement;
  /** That turn ended: answered (`answer`), stopped, failed, or ended unseen. */
  ended(answer: ChatResponse | null): void;
}

/** Another tab's turn being shown. */
interface Watched {
  lease: number;
  bubble: HTMLElement;
  markers: MarkerStream;
  shown: string;
}

/** The WebSocket of one guided conversation, and the other tabs' turns it shows. */
export class OtherTabs {
  private readonly connection: LiveConnection;
  private watched: Watched | null = null;
  private lastSeq = 0;
  /** Turn events of later turns that came while the page read its own. */
  private held: LiveEvent[] = [];

  constructor(readonly id: string, token: string, private readonly hooks: TabHooks) {
    this.connection = new LiveConnection(id, () => this.lastSeq, (event) => this.handle(event), token);
  }

  /** Closes the connection (the page shows another conversation, or none); a turn being shown
   * is not the page's any more. */
  close(): void {
    this.connection.close();
    this.watched = null;
  }

  /** The page's own turn ended: the turns held meanwhile are shown now (those the page read
   * itself are left out). */
  ownEnded(): void {
    for (const event of this.held.splice(0)) this.handle(event);
  }

  private handle(event: LiveEvent): void {
    if (event.seq) this.lastSeq = Math.max(this.lastSeq, event.seq);
    const ofTurn = event.type === "conversation:turn_started" || event.type === "conversation:turn_event";
    if (ofTurn && leaseOf(event) <= this.hooks.readLease()) return;
    if (ofTurn && this.hooks.reading()) return void this.held.push(event);
    if (event.type === "conversation:turn_started") {
      if (this.watched?.lease === event.lease) return;
      if (this.watched) this.end(null);
      const bubble = this.hooks.began(event.message?.content ?? "");
      this.watched = { lease: event.lease ?? 0, bubble, markers: new MarkerStream(), shown: "" };
      return;
    }
    const watched = this.watched;
    // A turn shown here ended while the socket was away, or (idle) one began and ended then: the
    // page reads the conversation again.
    if (event.type === "conversation:caught_up" && !event.running && (watched || (event.reconnected && !this.hooks.reading()))) return this.end(null);
    if (event.type !== "conversation:turn_event" || !watched || !event.event) return;
    if (Math.floor((event.seq ?? 0) / 1_000_000) !== watched.lease) return;
    const turn = event.event;
    if (turn.type === "model_delta") {
      for (const piece of watched.markers.feed(String(turn.text))) if (piece.type === "text") watched.shown += piece.text;
      watched.bubble.textContent = watched.shown;
    } else if (turn.type === "text_delta") {
      watched.shown += String(turn.text);
      watched.bubble.textContent = watched.shown;
    } else if (turn.type === "complete") {
      this.end(turn.payload as ChatResponse);
    } else if (turn.type === "stopped" || turn.type === "error") {
      this.end(null);
    }
  }

  private end(answer: ChatResponse | null): void {
    this.watched = null;
    this.hooks.ended(answer);
  }
}

//! A guided turn as the page reads it live: its events into the answer's bubble, a connection lost
//! mid-answer joined again where it broke off, the turn kept for a reload to join, and Stop.

import { MarkerStream, type ChatResponse } from "../../crates/wasm/pkg/stepwise.js";
import { SEQ_SPAN } from "./assistant/live.js";
import { authHeaders } from "./owner.js";
import { readSse } from "./sse.js";
import { REJOIN_DELAYS_MS } from "./rejoin.js";
import { tabId } from "./tab.js";

/** The turn being answered, for a reload to join. */
export interface Running {
  message: string;
  conversation_id: string;
  /** The conversation's token (a first turn's comes with its stream, before it is stored). */
  token: string;
  /** The tab reading it (`tab.ts`): another tab opened meanwhile follows it as that tab's. */
  tab?: string;
  /** Its lease, once its first event came (0 for a first turn). */
  lease?: number;
}

/** Where the turn being answered is kept for a reload: a {@link Running}. */
const RUNNING_KEY = "stepwise.chat.running.v1";

/** A turn its owner stopped: the answer so far is kept, marked stopped. */
export class Stopped extends Error {
  /** The turn that was stopped, when this page started it. */
  running: Running | null = null;
  constructor(readonly partial: string) {
    super("Stopped.");
  }
}

/** The turn ended while this page was not reading it: the stored conversation holds it. */
export class Ended extends Error {
  constructor(readonly running: Running) {
    super("The answer ended while the page was away.");
  }
}

/** The connection broke mid-answer and joining the turn again failed: the turn goes on on the
 * server, and is kept for a reload to join. */
export class Lost extends Error {
  constructor() {
    super("The connection was lost while the answer was streaming. The answer goes on on the server: reload the page to see it.");
  }
}

/** Chips, options and a proposed message seen while the answer streams. */
export interface LiveChoices {
  suggestions: string[];
  options: string[];
  proposed: string | null;
}

/** Remembers the turn being answered, for a reload of this tab (or a tab opened meanwhile). */
export function remember(running: Running): void {
  localStorage.setItem(RUNNING_KEY, JSON.stringify({ ...running, tab: running.tab ?? tabId() }));
}

/** Forgets the turn: it ended, and this page saw how. */
export function forget(): void {
  // Another tab's record (a turn this tab only follows) is that tab's to forget.
  const tab = readRunning()?.tab;
  if (!tab || tab === tabId()) localStorage.removeItem(RUNNING_KEY);
}

/** The kept turn as stored, if any. */
function readRunning(): Running | null {
  try {
    return JSON.parse(localStorage.getItem(RUNNING_KEY) ?? "null");
  } catch {
    return null;
  }
}

/** Whether a page before the reload was reading a turn (kept until {@link recall}). */
export function pendingRejoin(): boolean {
  return localStorage.getItem(RUNNING_KEY) !== null;
}

/** A turn kept for a reload, shown as running until it is joined: its message and answer
 * bubble on the page, whether it is the tab's own, and the page's generation then. */
export interface Held {
  running: Running;
  own: boolean;
  asked: HTMLElement;
  bubble: HTMLElement;
  generation: number;
}

/** The turn a page before the reload was reading, if any, and whether that page was this tab
 * (read once: this tab's is forgotten; another tab's is left for that tab's reload). */
export function recall(): { running: Running; own: boolean } | null {
  // A corrupt entry joins nothing.
  const running = readRunning();
  const own = !running?.tab || running.tab === tabId();
  if (own) localStorage.removeItem(RUNNING_KEY);
  return running && typeof running.conversation_id === "string" && typeof running.token === "string" ? { running, own } : null;
}

/** Joins the turn's stream after the event `after` (from its start without one): the response,
 * 204 when no turn runs any more, or `null` when the server was not reached. */
export async function join(running: Running, after?: string): Promise<Response | null> {
  const headers = authHeaders({ "x-conversation-token": running.token, "x-stepwise-deltas": "model" });
  if (after) headers["last-event-id"] = after;
  return fetch(`/api/conversations/${running.conversation_id}/stream`, { headers }).catch(() => null);
}

/** How the turn `running` (of a known lease) ended while this page was away: its answer, or the
 * error that ended it. Joined from its first event (after the first for a first turn, whose
 * numbers start at 1); the server keeps the last few turns' events, so this holds after another
 * turn began too. `null` when it was stopped or that cannot be learned. */
export async function outcome(running: Running): Promise<{ answer?: ChatResponse; error?: { code: string; message: string } } | null> {
  if (running.lease === undefined) return null;
  const response = await join(running, String(Math.max(1, running.lease * SEQ_SPAN)));
  if (!response?.ok || !response.body) return null;
  try {
    for await (const message of readSse(response.body)) {
      // Another turn's events: this one is not kept any more.
      if (message.id && Math.floor(Number(message.id) / SEQ_SPAN) !== running.lease) return null;
      const event = JSON.parse(message.data);
      if (event.type === "error") return { error: event };
      if (event.type === "complete") return { answer: event.payload as ChatResponse };
    }
  } catch {
    return null;
  }
  return null;
}

/** Asks the server to stop the turn: `null` once asked, or why it was refused. */
export async function requestStop(running: Running): Promise<string | null> {
  try {
    const response = await fetch(`/api/conversations/${running.conversation_id}/stop`, {
      method: "POST",
      headers: authHeaders({ "content-type": "application/json", "x-conversation-token": running.token }),
      body: "{}",
    });
    if (response.ok) return null;
    const body = await response.json().catch(() => null);
    return body?.error ? `Stop was refused: ${body.error.message} (${body.error.code})` : `Stop was refused (${response.status}).`;
  } catch {
    return "Stop did not reach the server; the answer goes on.";
  }
}

/** Reads one turn's events into `bubble` (its text through `MarkerStream`, so chips and options
 * show as soon as their line completes) until the `complete` event, which is authoritative. A
 * connection that breaks mid-answer is joined again after the last event read, so nothing shows
 * twice; when that fails, {@link Lost}. */
export class TurnReader {
  private readonly markers = new MarkerStream();
  private readonly live: LiveChoices = { suggestions: [], options: [], proposed: null };
  private shown = "";
  private lastId: string | undefined;
  /** The turn read (its lease, once known, tells its events from another turn's). */
  private turn: Running | null = null;

  /** `onLease` hears the lease of the turn read (from its events' ids) as they come. */
  constructor(
    private readonly bubble: HTMLElement,
    private readonly showChoices: (live: LiveChoices) => void,
    private readonly onLease: (lease: number) => void = () => {},
  ) {}

  /** Follows `body`, then the turn's joins when it breaks (`running`: the turn to join; without
   * it a broken connection is {@link Lost} at once). */
  async read(body: ReadableStream<Uint8Array>, running: Running | null): Promise<ChatResponse> {
    this.turn = running;
    for (let attempt = 0; ; attempt++) {
      const answer = await this.follow(body);
      if (answer) return answer;
      if (!running || attempt >= REJOIN_DELAYS_MS.length) throw new Lost();
      await new Promise((resolve) => setTimeout(resolve, REJOIN_DELAYS_MS[attempt]));
      const response = await join(running, this.lastId);
      if (response?.status === 204) throw new Ended(running);
      // A join the server refused is not retried: the turn is not this page's to read.
      if (response && !response.ok) throw new Error(`The answer could not be joined again (${response.status}).`);
      if (response?.body) body = response.body;
      else body = new ReadableStream({ start: (c) => c.close() });
    }
  }

  /** The answer, or `null` when the connection broke before it ended. */
  private async follow(body: ReadableStream<Uint8Array>): Promise<ChatResponse | null> {
    try {
      for await (const message of readSse(body)) {
        if (message.id) {
          const lease = Math.floor(Number((this.lastId = message.id)) / SEQ_SPAN);
          // Another turn's events (this one ended and the next began before the join): not this one's.
          if (this.turn?.lease !== undefined && lease !== this.turn.lease) throw new Ended(this.turn);
          this.onLease(lease);
        }
        const event = JSON.parse(message.data);
        if (event.type === "model_delta") {
          for (const piece of this.markers.feed(event.text)) {
            if (piece.type === "text") this.shown += piece.text;
            else if (piece.type === "marker" && piece.kind === "suggestions") this.live.suggestions = piece.value;
            else if (piece.type === "marker" && piece.kind === "options") this.live.options = piece.value;
            else if (piece.type === "marker" && piece.kind === "proposed_message") this.live.proposed = piece.value;
          }
          this.bubble.textContent = this.shown;
          this.showChoices(this.live);
        } else if (event.type === "text_delta") {
          this.shown += event.text;
          this.bubble.textContent = this.shown;
        } else if (event.type === "complete") {
          return event.payload as ChatResponse;
        } else if (event.type === "stopped") {
          throw new Stopped(event.message ?? this.shown);
        } else if (event.type === "error") {
          throw new Error(`${event.message} (${event.code})`);
        }
      }
    } catch (error) {
      if (error instanceof Stopped || error instanceof Ended || (error instanceof Error && / \(\w+\)$/.test(error.message))) throw error;
    }
    return null;
  }
}

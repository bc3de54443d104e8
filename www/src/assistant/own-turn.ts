//! The tray's own turn as it is read, kept for the tab (sessionStorage, under its tab key): after
//! a reload the tab follows that turn over the conversation's live connection, and if it fails
//! (the server keeps nothing of a failed turn) its message goes back into the box, as its own
//! stream would have put it. A turn that ended while the tab was reloading (before its live
//! connection could replay it) is joined from its start once the connection has caught up, to
//! learn whether it failed: the server keeps the last few turns' events, so this holds even when
//! another tab's turn has begun since.

import type { StreamEvent } from "../../../crates/wasm/pkg/stepwise.js";
import { authHeaders } from "../owner.js";
import { readSse } from "../sse.js";
import { tabKey } from "../tab.js";
import { SEQ_SPAN } from "./live.js";

const KEY = "stepwise.tray.reading.v1";

/** How a first turn whose conversation is gone ended, as far as the tab can tell. */
const GONE = { type: "error", code: "turn_failed", message: "The answer failed while the page reloaded; nothing of it was kept." } as StreamEvent;

/** A turn of this tab's: its conversation, its lease and the message it answers; `first`: it
 * began the conversation (which a failure leaves not existing). */
export interface OwnTurn {
  conversation: string;
  lease: number;
  content: string;
  first?: boolean;
}

/** Keeps `turn` as this tab's turn being read (`null`: none now). */
export function keepOwnTurn(turn: OwnTurn | null): void {
  if (turn) sessionStorage.setItem(tabKey(KEY), JSON.stringify(turn));
  else sessionStorage.removeItem(tabKey(KEY));
}

/** The kept turn, when it is conversation `conversation`'s turn of `lease`. */
export function ownTurnOf(conversation: string | null, lease: number): OwnTurn | null {
  const kept = keptTurn();
  return kept && kept.conversation === conversation && kept.lease === lease ? kept : null;
}

function keptTurn(): OwnTurn | null {
  try {
    const kept = JSON.parse(sessionStorage.getItem(tabKey(KEY)) ?? "null") as OwnTurn | null;
    return kept && typeof kept.conversation === "string" && Number.isSafeInteger(kept.lease) && typeof kept.content === "string" ? kept : null;
  } catch {
    return null;
  }
}

/** How this tab's kept turn of conversation `conversation` ended, joined from its first event
 * (the server keeps the last few turns' events): the turn, with the error that ended it (`null`:
 * answered or stopped); `null` when it is the turn `running` (followed as it runs), or when how
 * it ended cannot be learned (too many turns since: the join then gives the running turn's
 * events, which are not read).
 * The record is claimed at once, so that one call learns of it, and kept again only when the
 * server could not be reached. `firstOnly`: only a first turn's (whose conversation is gone if it
 * failed: the join is then refused, and that is the answer). */
export async function ownTurnOutcome(conversation: string, running: number | null, firstOnly = false): Promise<{ turn: OwnTurn; error: StreamEvent | null } | null> {
  const kept = keptTurn();
  if (!kept || kept.conversation !== conversation || kept.lease === running || (firstOnly && !kept.first)) return null;
  keepOwnTurn(null);
  // Not learned (the server not reached, the join cut off): kept again for the next catch-up,
  // unless a newer turn is kept by now.
  const keepAgain = () => (keptTurn() ? null : (keepOwnTurn(kept), null));
  const headers = authHeaders({ accept: "text/event-stream", "last-event-id": String(kept.lease * SEQ_SPAN) });
  const response = await fetch(`/api/assistant/conversations/${conversation}/stream`, { headers }).catch(() => null);
  if (!response) return keepAgain();
  if (response.status === 404 && kept.first) return { turn: kept, error: GONE };
  if (!response.ok || !response.body) return null;
  let error: StreamEvent | null = null;
  try {
    for await (const message of readSse(response.body)) {
      // The running turn's events: the kept one is not kept at the server any more.
      if (message.id && Math.floor(Number(message.id) / SEQ_SPAN) !== kept.lease) return null;
      const event = JSON.parse(message.data) as StreamEvent;
      if (event.type === "error") error = event;
    }
  } catch {
    return keepAgain();
  }
  return { turn: kept, error };
}

//! The tray's own turns as they are read, kept for the tab (sessionStorage, under its tab key;
//! the last few, so a message sent after a reload does not take the place of one whose fate is
//! still to be learned): after a reload the tab follows such a turn over the conversation's live
//! connection, and if it fails (the server keeps nothing of a failed turn) its message goes back
//! into the box, as its own stream would have put it. A turn that ended while the tab was reloading (before its live
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

/** How many of the tab's turns are kept (the server keeps as many ended turns' events). */
export const KEPT = 5;

/** Keeps `turn` among this tab's turns being read (a message sent after a reload, while an
 * earlier one's fate is still to be learned, does not take its place). */
export function keepOwnTurn(turn: OwnTurn): void {
  store([...keptTurns().filter((kept) => !same(kept, turn)), turn].slice(-KEPT));
}

/** Forgets `turn` (its end was read). */
export function dropOwnTurn(turn: OwnTurn): void {
  store(keptTurns().filter((kept) => !same(kept, turn)));
}

/** The kept turn of conversation `conversation` whose lease is `lease`. */
export function ownTurnOf(conversation: string | null, lease: number): OwnTurn | null {
  return keptTurns().find((kept) => kept.conversation === conversation && kept.lease === lease) ?? null;
}

/** The kept turns of conversation `conversation`, which is gone (a first turn that failed took
 * it, and every turn after it): claimed, oldest first. */
export function ownTurnsGone(conversation: string): OwnTurn[] {
  const [gone, rest] = [keptTurns().filter((kept) => kept.conversation === conversation), keptTurns().filter((kept) => kept.conversation !== conversation)];
  store(rest);
  return gone;
}

const same = (a: OwnTurn, b: OwnTurn) => a.conversation === b.conversation && a.lease === b.lease;

function store(turns: OwnTurn[]): void {
  if (turns.length) sessionStorage.setItem(tabKey(KEY), JSON.stringify(turns));
  else sessionStorage.removeItem(tabKey(KEY));
}

function keptTurns(): OwnTurn[] {
  try {
    const kept: unknown = JSON.parse(sessionStorage.getItem(tabKey(KEY)) ?? "[]");
    // One turn alone was kept before this list.
    const all = (Array.isArray(kept) ? kept : [kept]) as OwnTurn[];
    return all.filter((turn) => turn && typeof turn.conversation === "string" && Number.isSafeInteger(turn.lease) && typeof turn.content === "string");
  } catch {
    return [];
  }
}

/** How this tab's oldest kept turn of conversation `conversation` (other than the turn
 * `running`, followed as it runs) ended, joined from its first event (the server keeps the last
 * few turns' events): the turn, with the error that ended it (`null`: answered or stopped);
 * `null` when none is kept, or when how it ended cannot be learned (too many turns since: the
 * join then gives the running turn's events, which are not read).
 * The record is claimed at once, so that one call learns of it, and kept again only when the
 * server could not be reached. `firstOnly`: only a first turn's (whose conversation is gone if it
 * failed: the join is then refused, and that is the answer). */
export async function ownTurnOutcome(conversation: string, running: number | null, firstOnly = false): Promise<{ turn: OwnTurn; error: StreamEvent | null } | null> {
  const kept = keptTurns().find((turn) => turn.conversation === conversation && turn.lease !== running && (!firstOnly || turn.first));
  if (!kept) return null;
  dropOwnTurn(kept);
  // Not learned (the server not reached, the join cut off): kept again for the next catch-up.
  const keepAgain = () => (keepOwnTurn(kept), null);
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

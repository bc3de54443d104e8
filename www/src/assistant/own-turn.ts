//! The tray's own turn as it is read, kept for the tab (sessionStorage, under its tab key): after
//! a reload the tab follows that turn over the conversation's live connection, and if it fails
//! (the server keeps nothing of a failed turn) its message goes back into the box, as its own
//! stream would have put it.

import { tabKey } from "../tab.js";

const KEY = "stepwise.tray.reading.v1";

/** A turn of this tab's: its conversation, its lease and the message it answers. */
export interface OwnTurn {
  conversation: string;
  lease: number;
  content: string;
}

/** Keeps `turn` as this tab's turn being read (`null`: none now). */
export function keepOwnTurn(turn: OwnTurn | null): void {
  if (turn) sessionStorage.setItem(tabKey(KEY), JSON.stringify(turn));
  else sessionStorage.removeItem(tabKey(KEY));
}

/** The kept turn, when it is conversation `conversation`'s turn of `lease`. */
export function ownTurnOf(conversation: string | null, lease: number): OwnTurn | null {
  try {
    const kept = JSON.parse(sessionStorage.getItem(tabKey(KEY)) ?? "null") as OwnTurn | null;
    return kept && kept.conversation === conversation && kept.lease === lease && typeof kept.content === "string" ? kept : null;
  } catch {
    return null;
  }
}

//! This tab's id, kept across its reloads (sessionStorage) and not shared with other tabs: a turn
//! a page reads is marked with it, so that after a reload the page joins its own turn again, while
//! a tab opened meanwhile follows that turn as another tab's. A browser's "Duplicate tab" copies
//! sessionStorage, id included: the copy finds the page it was copied from still marked as shown
//! and takes an id of its own, leaving that tab what it keeps for itself (`tabKey`).

const TAB_KEY = "stepwise.tab.v1";
/** Set while a page of this tab is shown, removed as it goes (a reload, a navigation). */
const SHOWN_KEY = "stepwise.tab.shown.v1";

// (A page the browser discarded to save memory, reloaded now, never said it went: it is no copy.
// Nor is a tab restored after a crash, which cannot be told from one: it takes a new id too.)
const discarded = (document as Document & { wasDiscarded?: boolean }).wasDiscarded === true;
if (sessionStorage.getItem(SHOWN_KEY) !== null && !discarded) {
  // A copy of a tab still shown: its id, and what it keeps under that id, are the other tab's.
  const copied = sessionStorage.getItem(TAB_KEY);
  sessionStorage.removeItem(TAB_KEY);
  const theirs = Array.from({ length: sessionStorage.length }, (_, i) => sessionStorage.key(i)).filter((key) => copied && key?.endsWith(`@${copied}`));
  for (const key of theirs) sessionStorage.removeItem(key!);
}
sessionStorage.setItem(SHOWN_KEY, "1");
addEventListener("pagehide", () => sessionStorage.removeItem(SHOWN_KEY));
addEventListener("pageshow", (event) => event.persisted && sessionStorage.setItem(SHOWN_KEY, "1"));

/** This tab's id. */
export function tabId(): string {
  let id = sessionStorage.getItem(TAB_KEY);
  // `getRandomValues`, not `randomUUID`: the latter exists only on https and localhost.
  if (!id) sessionStorage.setItem(TAB_KEY, (id = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")));
  return id;
}

/** The sessionStorage key under which this tab keeps `key`'s value for itself (a queued message,
 * the ids of its waiting messages): a duplicate of the tab does not take it. */
export function tabKey(key: string): string {
  return `${key}@${tabId()}`;
}

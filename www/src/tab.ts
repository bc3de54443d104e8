//! This tab's id, kept across its reloads (sessionStorage) and not shared with other tabs: a turn
//! a page reads is marked with it, so that after a reload the page joins its own turn again, while
//! a tab opened meanwhile follows that turn as another tab's.

const TAB_KEY = "stepwise.tab.v1";

/** This tab's id. */
export function tabId(): string {
  let id = sessionStorage.getItem(TAB_KEY);
  // `getRandomValues`, not `randomUUID`: the latter exists only on https and localhost.
  if (!id) sessionStorage.setItem(TAB_KEY, (id = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")));
  return id;
}

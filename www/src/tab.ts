//! This tab's id, kept across its reloads (sessionStorage) and not shared with other tabs: a turn
//! a page reads is marked with it, so that after a reload the page joins its own turn again, while
//! a tab opened meanwhile follows that turn as another tab's. A browser's "Duplicate tab" copies
//! sessionStorage, id included: the copy finds the page it was copied from still marked as shown,
//! asks this browser's tabs whether that page is alive (a `BroadcastChannel`), and if it answers
//! takes an id of its own, leaving that tab what it keeps for itself (`tabKey`). A tab restored
//! after a crash finds the mark too, but nobody answers for its id: it keeps it, and with it its
//! queued message and its own running turn.

const TAB_KEY = "stepwise.tab.v1";
/** Set while a page of this tab is shown, removed as it goes (a reload, a navigation). */
const SHOWN_KEY = "stepwise.tab.shown.v1";
/** How long a page found marked waits for a live tab of its id to answer, in ms. */
const ANSWER_MS = 500;

const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("stepwise.tab.v1") : null;
/** Whether this page's id is settled (until then it answers for no id). */
let settled = false;
channel?.addEventListener("message", (event: MessageEvent) => {
  const asked = event.data as { type?: unknown; id?: unknown } | null;
  if (settled && asked?.type === "who" && asked.id === sessionStorage.getItem(TAB_KEY)) channel.postMessage({ type: "here", id: asked.id });
});

/** Whether a live page of this browser holds tab id `id` (answers within ANSWER_MS); without a
 * channel to ask on, it is taken to. */
function alive(id: string): Promise<boolean> {
  if (!channel) return Promise.resolve(true);
  return new Promise((resolve) => {
    const answered = (event: MessageEvent) => {
      const answer = event.data as { type?: unknown; id?: unknown } | null;
      if (answer?.type === "here" && answer.id === id) done(true);
    };
    const done = (found: boolean) => {
      clearTimeout(timer);
      channel.removeEventListener("message", answered);
      resolve(found);
    };
    const timer = setTimeout(() => done(false), ANSWER_MS);
    channel.addEventListener("message", answered);
    channel.postMessage({ type: "who", id });
  });
}

/** Settles this page's id: a copy of a tab still shown gives up the id it was copied with, and
 * what it keeps under it, which are the other tab's. */
async function settle(): Promise<void> {
  // (A page the browser discarded to save memory, reloaded now, never said it went: it is no copy.)
  const discarded = (document as Document & { wasDiscarded?: boolean }).wasDiscarded === true;
  const copied = sessionStorage.getItem(TAB_KEY);
  if (sessionStorage.getItem(SHOWN_KEY) !== null && !discarded && copied && (await alive(copied))) {
    sessionStorage.removeItem(TAB_KEY);
    const theirs = Array.from({ length: sessionStorage.length }, (_, i) => sessionStorage.key(i)).filter((key) => key?.endsWith(`@${copied}`));
    for (const key of theirs) sessionStorage.removeItem(key!);
  }
  sessionStorage.setItem(SHOWN_KEY, "1");
  settled = true;
}

/** Resolves once this tab's id is settled: nothing may read it before (the app waits for it). */
export const tabSettled: Promise<void> = settle();
/** The page is being left (a reload, a navigation): its requests fail then, and nothing may be
 * concluded from that (a turn being joined is still kept for the next page). */
let leaving = false;
addEventListener("pagehide", () => ((leaving = true), sessionStorage.removeItem(SHOWN_KEY)));
addEventListener("pageshow", (event) => ((leaving = false), event.persisted && sessionStorage.setItem(SHOWN_KEY, "1")));

/** Whether this page is being left ({@link leaving}). */
export function pageLeaving(): boolean {
  return leaving;
}

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

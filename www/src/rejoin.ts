//! Joining a running turn again, the guided chat's and the Help page's alike: the waits between
//! tries after a connection broke, and a reloaded page's join tried until the server is reached.

import { pageLeaving } from "./tab.js";

/** Waits between attempts to join a turn again after its connection broke, in ms. */
export const REJOIN_DELAYS_MS = [250, 1000, 3000];
/** How often a reloaded page tries again to join its turn once the quick tries are spent, in ms. */
export const PATIENT_EVERY_MS = 5000;
/** What a reloaded page says while it cannot join its turn yet. */
export const NOT_REACHED = "The server cannot be reached: still trying to follow the answer, which goes on there.";

/** `join()`, tried again while the server is not reached (`null`): after each of the rejoin
 * delays, then every {@link PATIENT_EVERY_MS} (`waiting()` is told once the quick tries are
 * spent), for as long as `still()` and the page is not being left; `null` then. */
export async function joinPatiently<T>(join: () => Promise<T | null>, still: () => boolean, waiting: () => void): Promise<T | null> {
  for (let attempt = 0; ; attempt++) {
    const joined = await join();
    if (joined || !still() || pageLeaving()) return joined;
    if (attempt === REJOIN_DELAYS_MS.length) waiting();
    await new Promise((resolve) => setTimeout(resolve, REJOIN_DELAYS_MS[attempt] ?? PATIENT_EVERY_MS));
  }
}

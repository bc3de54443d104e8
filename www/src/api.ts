//! Calls to the Worker's JSON API with this browser's owner token: the parsed answer, or an
//! `Error` whose message ends with the server's error code in parentheses. A call refused for
//! the optional Turnstile check is sent again once the check is solved (`turnstile.ts`).

import { authHeaders } from "./owner.js";
import { fetchWithChallenge } from "./turnstile.js";

/** The message of a call's `Error` when the server was not reached (or its answer was lost). */
export const CONNECTION_LOST = "The connection was lost.";

/** Calls `path`; `null` for 204. */
export async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetchWithChallenge(path, { method, headers: authHeaders({ "content-type": "application/json", ...headers }), body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new Error(CONNECTION_LOST);
  }
  if (response.status === 204) return null as T;
  const json = await response.json().catch(() => null);
  if (!response.ok) throw new Error(json?.error ? `${json.error.message} (${json.error.code})` : `The server answered ${response.status}.`);
  return json as T;
}

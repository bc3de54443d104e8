//! The browser's anonymous owner token: 128 random bits made here, kept in localStorage, and
//! sent as `Authorization: Bearer` with every API call. The server keys this browser's jobs and
//! conversations by its SHA-256 and never stores it. (Behind Cloudflare Access the signed-in
//! identity is the owner instead, and this header is ignored.)

const KEY = "stepwise.owner.v1";

/** This browser's owner token, made on first use. */
export function ownerToken(): string {
  let token = localStorage.getItem(KEY);
  if (!token || !/^[0-9a-f]{32}$/.test(token)) {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    token = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    localStorage.setItem(KEY, token);
  }
  return token;
}

/** Headers for an API call: the owner's token, plus `extra`. */
export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${ownerToken()}`, ...extra };
}

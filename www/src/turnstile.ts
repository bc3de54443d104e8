//! The optional Turnstile check (docs/deploying.md): when the server answers a model call with
//! 403 `challenge_required` (a new visitor's first call while the operator has the check on),
//! the page shows Cloudflare's widget in a dialog and, once it is solved, sends the same call
//! again with the widget's token in `cf-turnstile-response`. Nothing happens without the check:
//! the script is loaded only when a call was refused for it.

import { h } from "./dom.js";

/** Where Cloudflare serves the widget's script (allowed by the page's CSP, `www/_headers`). */
const SCRIPT_URL = "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit";
/** The header the server reads the token from. */
const TOKEN_HEADER = "cf-turnstile-response";

/** The part of Cloudflare's `window.turnstile` used here. */
interface TurnstileApi {
  render(container: HTMLElement, options: { sitekey: string; callback: (token: string) => void; "error-callback"?: () => void }): string;
}

declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

let loading: Promise<TurnstileApi> | undefined;

/** `fetch`, answered again once with a solved check when the server asks for one. The body
 * must be a string (or absent), so that it can be sent twice. */
export async function fetchWithChallenge(path: string, init: RequestInit & { body?: string }): Promise<Response> {
  const response = await fetch(path, init);
  if (response.status !== 403) return response;
  const body = await response.clone().json().catch(() => null);
  if (body?.error?.code !== "challenge_required") return response;
  const siteKey = /site key `([^`]*)`/.exec(body.error.message ?? "")?.[1] ?? "";
  const token = await solve(siteKey);
  if (!token) return response;
  const headers = new Headers(init.headers);
  headers.set(TOKEN_HEADER, token);
  return fetch(path, { ...init, headers });
}

/** Shows the widget in a dialog; the token, or `null` when the person cancels or it fails. */
async function solve(siteKey: string): Promise<string | null> {
  let api: TurnstileApi;
  try {
    api = await load();
  } catch {
    return null;
  }
  return new Promise((resolve) => {
    const widget = h("div", { class: "turnstile-widget" });
    const dialog = h("dialog", { class: "confirm-dialog turnstile-dialog", "aria-labelledby": "turnstile-title" });
    let settled = false;
    const done = (token: string | null) => {
      if (settled) return;
      settled = true;
      dialog.close();
      resolve(token);
    };
    dialog.append(
      h("h2", { id: "turnstile-title" }, "One check before your first question"),
      h("p", {}, "This service asks new visitors to confirm they are a person before it calls a model for them."),
      widget,
      h("div", { class: "actions" }, h("button", { class: "btn secondary", type: "button", onclick: () => done(null) }, "Cancel")),
    );
    dialog.addEventListener("close", () => {
      dialog.remove();
      done(null);
    });
    document.body.append(dialog);
    dialog.showModal();
    api.render(widget, { sitekey: siteKey, callback: (token) => done(token), "error-callback": () => done(null) });
  });
}

/** Loads Cloudflare's script once. */
function load(): Promise<TurnstileApi> {
  if (window.turnstile) return Promise.resolve(window.turnstile);
  loading ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = SCRIPT_URL;
    script.async = true;
    script.onload = () => (window.turnstile ? resolve(window.turnstile) : reject(new Error("no turnstile")));
    script.onerror = () => {
      loading = undefined;
      reject(new Error("the Turnstile script could not be loaded"));
    };
    document.head.append(script);
  });
  return loading;
}

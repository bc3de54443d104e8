// A stand-in for Turnstile's siteverify endpoint on 127.0.0.1, for the suites of the optional
// Turnstile check: "good-token" with the secret "turnstile-secret" passes, "broken" makes it
// answer 500, anything else is refused. It records every form it was sent.
import http from "node:http";

/** Starts the stand-in; `{url, verifications, close}`. */
export async function startSiteverify() {
  const verifications = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      verifications.push(form);
      if (form.response === "broken") {
        res.writeHead(500, { "content-type": "text/plain" }).end("down");
        return;
      }
      const success = form.secret === "turnstile-secret" && form.response === "good-token";
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ success, "error-codes": success ? [] : ["invalid-input-response"] }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/siteverify`,
    verifications,
    close: () => server.close(),
  };
}

/** The Worker's settings for the check against `verifier`. */
export function turnstileSettings(verifier) {
  return { TURNSTILE_SECRET: "turnstile-secret", TURNSTILE_SITE_KEY: "site-key-1", TURNSTILE_VERIFY_URL: verifier.url };
}

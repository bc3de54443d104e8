// Benchmark (not a test): what the Worker adds on loopback, under `wrangler dev`, in one process.
//  - time to first token: POST /api/chat → first text_delta, against the same request made
//    straight to the fake provider → its first content event; at 1 and at 50 concurrent streams;
//  - forwarding delay: an upstream event's write → the text_delta carrying its text.
// Bounded: a fixed number of requests, loopback only; the stack is stopped at the end.
// Usage: node bench/worker-latency.mjs [miniflare|wrangler] [later]   (default miniflare: workerd
// driven directly; wrangler: under `wrangler dev`, whose local proxy adds its own hop; `later`:
// each sample is a conversation's second turn, its first one made untimed before it)
// `help`: each sample is a new help-desk session's question, timed to its answer (`complete`:
// the desk shows an answer whole), each from a new owner (answers are cached per owner);
// [--worker DIR]: runs another build of the Worker (an earlier commit's `worker/build`, miniflare
// only), to compare two builds in alternating runs of one sitting
import { asOwner, newOwner, startStack } from "../tests/e2e/harness.mjs";

const LINES = 20;
const REPLY = Array.from({ length: LINES }, (_, i) => `line ${i} of the answer\n`).join("");
const request = { message: "Track rivals", current_step: "purpose", current_config: {}, conversation_history: [] };

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** Reads a streamed body until `done(textSoFar)`; returns ms from `start` to that point. The rest
 * is read to its end: a turn outlives a client that leaves (a disconnect is not a Stop), and a
 * turn still answering would load the next measurement. */
async function firstMatch(response, start, done) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) throw new Error("stream ended early");
    text += decoder.decode(value, { stream: true });
    if (done(text)) {
      const at = performance.now() - start;
      while (!(await reader.read()).done);
      return at;
    }
  }
}

const LATER = process.argv.includes("later");
const HELP = process.argv.includes("help");
/** A question the starter knowledge base answers with a model call. */
const HELP_QUESTION = "Why are answers slow or stop midway?";
const chatHeaders = { accept: "text/event-stream", "content-type": "application/json", ...asOwner() };

/** A first turn, read to its end: the conversation's id, token and turns. */
async function opened(stack) {
  const text = await (await fetch(`${stack.base}/api/chat`, { method: "POST", headers: chatHeaders, body: JSON.stringify(request) })).text();
  const complete = text.split("\n\n").find((frame) => frame.includes("event: complete"));
  const payload = JSON.parse(complete.split("\n").find((l) => l.startsWith("data: ")).slice(6)).payload;
  return { id: payload.conversation_id, token: payload.conversation_token, turns: payload.turns };
}

async function viaWorker(stack) {
  if (HELP) {
    const headers = { ...chatHeaders, ...asOwner(newOwner()) };
    const start = performance.now();
    const response = await fetch(`${stack.base}/api/help`, { method: "POST", headers, body: JSON.stringify({ message: HELP_QUESTION }) });
    return firstMatch(response, start, (t) => t.includes("event: complete"));
  }
  let body = request;
  let headers = chatHeaders;
  if (LATER) {
    const { id, token, turns } = await opened(stack);
    body = { ...request, message: "Launches", conversation_id: id, turns };
    headers = { ...chatHeaders, "x-conversation-token": token };
  }
  const start = performance.now();
  const response = await fetch(`${stack.base}/api/chat`, { method: "POST", headers, body: JSON.stringify(body) });
  return firstMatch(response, start, (t) => t.includes("event: text_delta"));
}

async function direct(stack) {
  const start = performance.now();
  const response = await fetch(`${stack.fake.url}/openai/v1/chat/completions`, { method: "POST", body: JSON.stringify({ stream: true }) });
  return firstMatch(response, start, (t) => t.includes('"content":"line'));
}

async function rounds(stack, concurrency, total, fn) {
  const samples = [];
  while (samples.length < total) samples.push(...(await Promise.all(Array.from({ length: concurrency }, () => fn(stack)))));
  return samples;
}

const runtime = process.argv.includes("wrangler") ? "wrangler" : "miniflare";
const workerAt = process.argv.indexOf("--worker");
const workerDir = workerAt > 0 ? process.argv[workerAt + 1] : undefined;
const stack = await startStack({ runtime, workerDir, overrides: { LLM_TIMEOUT_MS: "30000" } });
try {
  // Realistic framing: one write per SSE event, as providers send (the e2e suite's adversarial
  // byte-level splits would measure per-chunk overhead thousands of times instead).
  stack.fake.script({ reply: REPLY, paced: true });
  await rounds(stack, 1, 5, viaWorker); // warm up
  console.log(`node ${process.version}; fake provider and the Worker (${workerDir ?? "this build"}, ${runtime === "wrangler" ? "wrangler dev" : "workerd via miniflare"}) on loopback; ${HELP ? "a new help session's question, to its answer" : LATER ? "a conversation's second turn" : "a first turn"}\n`);
  console.log("| concurrency | direct p50 | direct p95 | via Worker p50 | via Worker p95 | added p50 | added p95 |");
  console.log("|---:|---:|---:|---:|---:|---:|---:|");
  for (const [concurrency, total] of [[1, 50], [50, 150]]) {
    const d = await rounds(stack, concurrency, total, direct);
    const w = await rounds(stack, concurrency, total, viaWorker);
    const f = (x) => `${x.toFixed(1)} ms`;
    console.log(`| ${concurrency} | ${f(pct(d, 50))} | ${f(pct(d, 95))} | ${f(pct(w, 50))} | ${f(pct(w, 95))} | ${f(pct(w, 50) - pct(d, 50))} | ${f(pct(w, 95) - pct(d, 95))} |`);
  }

  // Forwarding delay: one upstream event per line, 20 ms apart; the same measurement made on
  // the fake provider's own stream gives the harness's floor (client and fake share one loop).
  const forwarding = async (url, init) => {
    const delays = [];
    for (let round = 0; round < 5; round++) {
      stack.fake.writes.length = 0;
      stack.fake.script({ reply: REPLY, paced: true, delayMs: 20 });
      const response = await fetch(url, init);
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let text = "";
      const seen = new Map();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        for (let line = 0; line < LINES; line++) if (!seen.has(line) && text.includes(`line ${line} of`)) seen.set(line, performance.now());
      }
      for (const [line, arrived] of seen) {
        const write = stack.fake.writes.find((w) => w.text.includes(`line ${line} of`));
        if (write) delays.push(arrived - write.at);
      }
    }
    return delays;
  };
  const straight = await forwarding(`${stack.fake.url}/openai/v1/chat/completions`, { method: "POST", body: "{}" });
  const via = await forwarding(`${stack.base}/api/chat`, { method: "POST", headers: { accept: "text/event-stream", "content-type": "application/json", ...asOwner() }, body: JSON.stringify(request) });
  console.log("\n| forwarding delay (write → arrival) | events | median | p95 |");
  console.log("|---|---:|---:|---:|");
  console.log(`| straight from the fake provider (harness floor) | ${straight.length} | ${pct(straight, 50).toFixed(2)} ms | ${pct(straight, 95).toFixed(2)} ms |`);
  console.log(`| through the Worker (text_delta) | ${via.length} | ${pct(via, 50).toFixed(2)} ms | ${pct(via, 95).toFixed(2)} ms |`);
  console.log(`| added by the Worker | | ${(pct(via, 50) - pct(straight, 50)).toFixed(2)} ms | ${(pct(via, 95) - pct(straight, 95)).toFixed(2)} ms |`);
  const health = [];
  for (let i = 0; i < 50; i++) {
    const start = performance.now();
    await (await fetch(`${stack.base}/healthz`)).text();
    health.push(performance.now() - start);
  }
  console.log(`\nFloor of the runtime itself: GET /healthz p50 ${pct(health, 50).toFixed(1)} ms, p95 ${pct(health, 95).toFixed(1)} ms (50 requests)`);
} finally {
  await stack.stop();
}

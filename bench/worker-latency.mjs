// Benchmark (not a test): what the Worker adds on loopback, under `wrangler dev`, in one process.
//  - time to first token: POST /api/chat → first text_delta, against the same request made
//    straight to the fake provider → its first content event; at 1 and at 50 concurrent streams;
//  - forwarding delay: an upstream event's write → the text_delta carrying its text.
// Bounded: a fixed number of requests, loopback only; the stack is stopped at the end.
import { startStack } from "../tests/e2e/harness.mjs";

const LINES = 20;
const REPLY = Array.from({ length: LINES }, (_, i) => `line ${i} of the answer\n`).join("");
const request = { message: "Track rivals", current_step: "purpose", current_config: {}, conversation_history: [] };

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** Reads a streamed body until `done(textSoFar)`; returns ms from `start` to that point. */
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
      await reader.cancel().catch(() => {});
      return at;
    }
  }
}

async function viaWorker(stack) {
  const start = performance.now();
  const response = await fetch(`${stack.base}/api/chat`, { method: "POST", headers: { accept: "text/event-stream" }, body: JSON.stringify(request) });
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

const stack = await startStack();
try {
  stack.fake.script({ reply: REPLY });
  await rounds(stack, 1, 5, viaWorker); // warm up
  console.log(`node ${process.version}; fake provider and wrangler dev on loopback\n`);
  console.log("| concurrency | direct p50 | direct p95 | via Worker p50 | via Worker p95 | added p50 | added p95 |");
  console.log("|---:|---:|---:|---:|---:|---:|---:|");
  for (const [concurrency, total] of [[1, 50], [50, 150]]) {
    const d = await rounds(stack, concurrency, total, direct);
    const w = await rounds(stack, concurrency, total, viaWorker);
    const f = (x) => `${x.toFixed(1)} ms`;
    console.log(`| ${concurrency} | ${f(pct(d, 50))} | ${f(pct(d, 95))} | ${f(pct(w, 50))} | ${f(pct(w, 95))} | ${f(pct(w, 50) - pct(d, 50))} | ${f(pct(w, 95) - pct(d, 95))} |`);
  }

  // Forwarding delay: one upstream event per line, 20 ms apart.
  const delays = [];
  for (let round = 0; round < 5; round++) {
    stack.fake.writes.length = 0;
    stack.fake.script({ reply: REPLY, paced: true, delayMs: 20 });
    const response = await fetch(`${stack.base}/api/chat`, { method: "POST", headers: { accept: "text/event-stream" }, body: JSON.stringify(request) });
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
      const write = stack.fake.writes.find((w) => w.text.includes(`line ${line} of`) || w.text.includes(`"line ${line}`));
      if (write) delays.push(arrived - write.at);
    }
  }
  console.log(`\nForwarding delay, upstream event write → text_delta arrival (${delays.length} events): median ${pct(delays, 50).toFixed(2)} ms, p95 ${pct(delays, 95).toFixed(2)} ms`);
} finally {
  await stack.stop();
}

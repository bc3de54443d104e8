// Benchmark (not a test): an assistant conversation's time per turn as it grows, JSON turns
// with the offline provider (so the figure is the Worker's and its objects' own work), from the
// first turn to turn `--turns` (300 by default): the median of turns 6-15 ("turn 10") against
// the median of the last ten, side by side in one run, and their ratio. Bounded: one stack on
// loopback, stopped at the end.
// `--worker DIR` runs another build of the Worker (an earlier commit's `worker/build`; before
// rows, conversations stopped at 100 turns, so compare with `--turns 99`).
// Usage: node bench/long-conversation.mjs [--turns N] [--runtime miniflare|wrangler] [--worker DIR]
import { apiCaller, fakeProvider, generousLimits, newOwner, startStack } from "../tests/e2e/harness.mjs";

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const TURNS = Number(arg("--turns", 300));
const runtime = arg("--runtime", "miniflare");
const workerDir = arg("--worker", undefined);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

// The fake provider is configured (the default provider of a test stack) but never called.
const providers = (url) => [fakeProvider(url, "fake-openai", "openai"), { name: "offline", kind: "offline" }];
const stack = await startStack({ runtime, providers, config: generousLimits, workerDir });
try {
  const call = apiCaller(() => stack.base);
  const owner = newOwner();
  const context = { current_page: "chat" };
  const times = [];
  let id;
  for (let n = 1; n <= TURNS; n++) {
    const body = { context, provider: "offline", message: `Message ${n}: how do heat pumps behave in houses built before ${1800 + n}?` };
    if (id) body.conversation_id = id;
    const start = performance.now();
    const response = await call("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body });
    times.push(performance.now() - start);
    if (response.status !== 200) throw new Error(`turn ${n}: ${response.status} ${response.text.slice(0, 300)}`);
    id = response.json.conversation_id;
    if (n % 50 === 0) console.error(`turn ${n}: ${times.at(-1).toFixed(1)} ms`);
  }
  const early = median(times.slice(5, 15));
  const late = median(times.slice(-10));
  const record = (await call("GET", `/api/assistant/conversations/${id}`, { owner })).json;
  console.log(`${workerDir ?? "this build"}, runtime ${runtime}, ${TURNS} turns, ${record.messages.length} messages stored`);
  console.log(`turn 10 (median of 6-15): ${early.toFixed(1)} ms`);
  console.log(`turn ${TURNS} (median of the last 10): ${late.toFixed(1)} ms`);
  console.log(`ratio: ${(late / early).toFixed(2)}x`);
  for (const at of [50, 100, 150, 200, 250]) {
    if (at + 5 <= TURNS) console.log(`  turns ${at - 4}-${at + 5}: ${median(times.slice(at - 5, at + 5)).toFixed(1)} ms`);
  }
} finally {
  await stack.stop();
}

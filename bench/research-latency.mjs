// Benchmark (not a test): research jobs end to end under `wrangler dev` (local Durable Objects and
// Queues) on loopback, every provider answering in 1 s and the synthesis in 1 s.
//  - `latency` (default): one job at a time, 4 providers; goal: at most 2.5 s from start to
//    completed (the calls run in parallel). A per-step breakdown from the client's events stream
//    and the fake provider's request log.
//  - `width`: 20 jobs at once, 16 providers each (320 provider calls and 20 syntheses): every job
//    completes, no call is lost or made twice (the fake provider's log, per job and provider),
//    and the slowest job's start → completed time against the ideal (1 s + the 1 s synthesis).
// Bounded: a fixed number of jobs, a time limit, then the stack stops.
// Usage: node bench/research-latency.mjs [latency [runs=5] | width [jobs=20] [providers=16]]
import { asOwner, fakeProvider, newOwner, startStack } from "../tests/e2e/harness.mjs";

const MODE = process.argv[2] === "width" ? "width" : "latency";
const RUNS = Number(process.argv[3] ?? (MODE === "width" ? 20 : 5));
const WIDTH = MODE === "width" ? Number(process.argv[4] ?? 16) : 4;
const PROVIDERS = Array.from({ length: WIDTH }, (_, i) => `p${i + 1}`);
const ANSWER_MS = 1000;
const RUN_LIMIT_MS = 5 * 60 * 1000;

const stack = await startStack({
  providers: (url) => [...PROVIDERS.map((p) => fakeProvider(url, p, "openai", p)), fakeProvider(url, "synth", "anthropic", "synth")],
  overrides: { LLM_PROVIDER: "synth", LLM_TIMEOUT_MS: "60000" },
});
// Titles come back at once; every provider and the synthesis answer in ANSWER_MS.
stack.fake.script((request) => ({ reply: `Report of ${request.model}.`, latencyMs: request.system.startsWith("You name") ? 0 : ANSWER_MS }));

const post = async (owner, path, body) => {
  const response = await fetch(stack.base + path, { method: "POST", headers: { "content-type": "application/json", ...asOwner(owner) }, body: JSON.stringify(body) });
  const json = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
};

/** One job: open its events stream, start it, and time every event as the client receives it. */
async function runJob(question) {
  const owner = newOwner();
  const job = await post(owner, "/api/research/draft", { prompt: question, selected_llms: PROVIDERS, synthesis_llm: "synth" });
  const stream = await fetch(`${stack.base}/api/research/${job.id}/events`, { headers: asOwner(owner) });
  const reader = stream.body.getReader();
  const decoder = new TextDecoder();
  const seen = {};
  let text = "";
  const read = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
      for (const line of text.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const event = JSON.parse(line.slice(6));
        const key = event.type === "status_changed" ? event.status : event.type === "provider_changed" ? `${event.provider}:${event.status}` : event.type ?? "snapshot";
        seen[key] ??= performance.now();
        if (key === "completed" || key === "failed") return reader.cancel().catch(() => {});
      }
      text = text.slice(text.lastIndexOf("\n") + 1);
    }
  })();
  const since = Date.now();
  const t0 = performance.now();
  await post(owner, "/api/research", { research_id: job.id });
  await read;
  const calls = stack.fake.requests.filter((r) => r.at >= since && JSON.stringify(r.body).includes(question));
  const first = (model) => calls.find((r) => r.model === model)?.at;
  return {
    question,
    completed: Boolean(seen.completed),
    total: seen.completed - t0,
    queueToProviders: Math.max(...PROVIDERS.map(first)) - since, // wall clock of the fake's log
    providersDone: Math.max(...PROVIDERS.map((p) => seen[`${p}:completed`])) - t0,
    synthesisSent: first("synth") - since,
    synthesisDone: seen.completed - t0,
  };
}

const fmt = (ms) => `${(ms / 1000).toFixed(3)} s`;
const median = (results, key) => [...results.map((r) => r[key])].sort((a, b) => a - b)[Math.floor(results.length / 2)];

/** Calls per job and provider in the fake provider's log: each must be exactly one. */
function callCounts(results) {
  let lost = 0;
  let duplicated = 0;
  for (const { question } of results) {
    for (const model of [...PROVIDERS, "synth"]) {
      const made = stack.fake.requests.filter((r) => r.model === model && !r.system.startsWith("You name") && JSON.stringify(r.body).includes(question)).length;
      if (made === 0) lost++;
      if (made > 1) duplicated += made - 1;
    }
  }
  return { lost, duplicated };
}

const limit = setTimeout(() => {
  console.error(`the run took longer than ${RUN_LIMIT_MS / 1000} s: stopped`);
  stack.stop().finally(() => process.exit(1));
}, RUN_LIMIT_MS);
try {
  await runJob("Warm-up question"); // the first job compiles the Worker's code paths
  console.log(`node ${process.version}; wrangler dev on loopback; every provider and the synthesis answer in ${ANSWER_MS} ms`);
  if (MODE === "latency") {
    const results = [];
    for (let i = 0; i < RUNS; i++) results.push(await runJob(`Benchmark question [${i}]`));
    console.log(`${RUNS} jobs one after another, ${WIDTH} providers each`);
    console.log(`start → completed: median ${fmt(median(results, "total"))}, max ${fmt(Math.max(...results.map((r) => r.total)))} (goal ≤ 2.500 s)`);
    console.log("median breakdown, from the start request:");
    console.log(`  last provider call reaches the provider  ${fmt(median(results, "queueToProviders"))}   (queue hop)`);
    console.log(`  last provider result recorded           ${fmt(median(results, "providersDone"))}`);
    console.log(`  synthesis call reaches the provider      ${fmt(median(results, "synthesisSent"))}   (queue hop)`);
    console.log(`  completed (synthesis recorded)           ${fmt(median(results, "synthesisDone"))}`);
  } else {
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: RUNS }, (_, i) => runJob(`Width question [${i}]`)));
    const wall = performance.now() - started;
    const { lost, duplicated } = callCounts(results);
    const slowest = Math.max(...results.map((r) => r.total));
    console.log(`${RUNS} jobs at once, ${WIDTH} providers each: ${RUNS * WIDTH} provider calls and ${RUNS} syntheses`);
    console.log(`completed: ${results.filter((r) => r.completed).length} of ${RUNS}; calls lost: ${lost}, made twice: ${duplicated} (the fake provider's log)`);
    console.log(`start → completed: median ${fmt(median(results, "total"))}, slowest ${fmt(slowest)} against the ideal ${fmt(2 * ANSWER_MS)} (${(slowest / (2 * ANSWER_MS)).toFixed(1)}x); all jobs ${fmt(wall)}`);
    console.log(`slowest job's last provider call reached its provider ${fmt(Math.max(...results.map((r) => r.queueToProviders)))} after its start`);
    process.exitCode = lost || duplicated || results.some((r) => !r.completed) ? 1 : 0;
  }
} finally {
  clearTimeout(limit);
  await stack.stop();
}

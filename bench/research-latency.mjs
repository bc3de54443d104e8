// Benchmark (not a test): a research job end to end under `wrangler dev` (local Durable Objects
// and Queues) with four providers answering in 1 s each and a 1 s synthesis, on loopback.
// Goal (issue #5): at most 2.5 s from start to completed (the calls run in parallel).
// Reports the total and a per-step breakdown from the client's events stream and the fake
// provider's request log. Bounded: RUNS jobs, then the stack stops.
// Usage: node bench/research-latency.mjs [runs]
import { fakeProvider, startStack } from "../tests/e2e/harness.mjs";

const RUNS = Number(process.argv[2] ?? 5);
const PROVIDERS = ["p1", "p2", "p3", "p4"];
const ANSWER_MS = 1000;

const stack = await startStack({
  providers: (url) => [...PROVIDERS.map((p) => fakeProvider(url, p, "openai", p)), fakeProvider(url, "synth", "anthropic", "synth")],
  overrides: { LLM_PROVIDER: "synth", LLM_TIMEOUT_MS: "30000" },
});
stack.fake.script((request) => ({ reply: `Report of ${request.model}.`, latencyMs: request.system.startsWith("You name") ? 0 : ANSWER_MS }));

const post = async (path, body) => (await fetch(stack.base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json();

/** One job: open its events stream, start it, and time every event as the client receives it. */
async function runJob() {
  const job = await post("/api/research/draft", { prompt: "Benchmark question", selected_llms: PROVIDERS, synthesis_llm: "synth" });
  const stream = await fetch(`${stack.base}/api/research/${job.id}/events`);
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
      }
      text = text.slice(text.lastIndexOf("\n") + 1);
    }
  })();
  const since = Date.now();
  const t0 = performance.now();
  await post("/api/research", { research_id: job.id });
  await read;
  const calls = stack.fake.requests.filter((r) => r.at >= since);
  const first = (model) => calls.find((r) => r.model === model)?.at;
  const providerSent = Math.max(...PROVIDERS.map(first)) - since; // wall clock (ms) of the fake's log
  const lastProviderDone = Math.max(...PROVIDERS.map((p) => seen[`${p}:completed`])) - t0;
  return {
    total: seen.completed - t0,
    queueToProviders: providerSent,
    providersDone: lastProviderDone,
    synthesisSent: first("synth") - since,
    synthesisDone: seen.completed - t0,
    published: seen.published - t0,
  };
}

try {
  await runJob(); // warm up
  const results = [];
  for (let i = 0; i < RUNS; i++) results.push(await runJob());
  const median = (key) => [...results.map((r) => r[key])].sort((a, b) => a - b)[Math.floor(results.length / 2)];
  const fmt = (ms) => `${(ms / 1000).toFixed(3)} s`;
  console.log(`node ${process.version}; ${RUNS} jobs, 4 providers x ${ANSWER_MS} ms + ${ANSWER_MS} ms synthesis, wrangler dev on loopback`);
  console.log(`start → completed: median ${fmt(median("total"))}, max ${fmt(Math.max(...results.map((r) => r.total)))} (goal ≤ 2.500 s)`);
  console.log("median breakdown, from the start request:");
  console.log(`  last provider call reaches the provider  ${fmt(median("queueToProviders"))}   (queue hop)`);
  console.log(`  last provider result recorded           ${fmt(median("providersDone"))}`);
  console.log(`  synthesis call reaches the provider      ${fmt(median("synthesisSent"))}   (queue hop)`);
  console.log(`  completed (synthesis recorded)           ${fmt(median("synthesisDone"))}`);
  console.log(`  share page published                     ${fmt(median("published"))}`);
} finally {
  await stack.stop();
}

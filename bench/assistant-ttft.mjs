// Benchmark (not a test): time to first token of an assistant turn, POST /api/assistant → its
// first text_delta, for this build and, with `--before <dir>`, another build of the Worker (the
// `worker/build` of an earlier commit) in the same run, one stack each, measured in alternating
// rounds so both see the same machine. The fake provider's own first event is the floor.
// Bounded: a fixed number of turns on loopback; the stacks are stopped at the end.
// Usage: node bench/assistant-ttft.mjs [--before <worker build dir> [--before-lacks Class,…]]
import { asOwner, fakeProvider, generousLimits, newOwner, startStack } from "../tests/e2e/harness.mjs";

const REPLY = Array.from({ length: 20 }, (_, i) => `line ${i} of the answer`).join("\n");
const ROUNDS = 6;
const PLAN = [
  [1, 10],
  [20, 40],
];

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** Ms from `start` until the streamed body holds `marker`. */
async function until(response, start, marker) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early: ${text.slice(0, 300)}`);
    text += decoder.decode(value, { stream: true });
    if (text.includes(marker)) {
      const at = performance.now() - start;
      // Read to the end: the turn commits, and the next one starts on a quiet object.
      while (!(await reader.read()).done);
      return at;
    }
  }
}

async function turn(stack) {
  const start = performance.now();
  const response = await fetch(`${stack.base}/api/assistant`, {
    method: "POST",
    // A client address, as Cloudflare sets it: the spending guard counts the network too.
    headers: { "content-type": "application/json", "cf-connecting-ip": "198.51.100.1", ...asOwner(newOwner()) },
    body: JSON.stringify({ provider: "fake-openai", message: "Summarize this page", context: { current_page: "chat" } }),
  });
  return until(response, start, "event: text_delta");
}

async function direct(stack) {
  const start = performance.now();
  const response = await fetch(`${stack.fake.url}/openai/v1/chat/completions`, { method: "POST", body: JSON.stringify({ stream: true }) });
  return until(response, start, '"content":"line');
}

const at = process.argv.indexOf("--before");
const beforeDir = at > 0 ? process.argv[at + 1] : null;
const providers = (url) => [fakeProvider(url, "fake-openai", "openai")];
const builds = [["this build", await startStack({ runtime: "miniflare", providers })]];
/** This tree's config for an earlier build: the Durable Object classes it does not export (and
 * their migrations) left out, named with `--before-lacks A,B` (e.g. SpendShard before the
 * spending guard was sharded). */
const lacks = process.argv.includes("--before-lacks") ? process.argv[process.argv.indexOf("--before-lacks") + 1].split(",") : [];
const earlier = (config) => {
  config.durable_objects.bindings = config.durable_objects.bindings.filter((b) => !lacks.includes(b.class_name));
  config.migrations = config.migrations.filter((m) => !(m.new_sqlite_classes ?? []).some((c) => lacks.includes(c)));
  return generousLimits(config);
};
if (beforeDir) builds.push(["before", await startStack({ runtime: "miniflare", providers, workerDir: beforeDir, config: earlier })]);
try {
  for (const [, stack] of builds) {
    stack.fake.script({ reply: REPLY, paced: true });
    // Warm up: enough turns of new owners that every object a turn may touch has started (the
    // spending guard's 64 shards are hit by owner id), as they are on a deployment in use.
    for (let i = 0; i < 200; i += 10) await Promise.all(Array.from({ length: 10 }, () => turn(stack)));
  }
  console.log(`node ${process.version}; workerd via miniflare and the fake provider on loopback; ${ROUNDS} alternating rounds\n`);
  console.log("| concurrency | build | turns | p50 | p95 | floor p50 (fake provider alone) |");
  console.log("|---:|---|---:|---:|---:|---:|");
  for (const [concurrency, perRound] of PLAN) {
    const samples = new Map(builds.map(([name]) => [name, []]));
    const floor = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, stack] of builds) {
        for (let done = 0; done < perRound; done += concurrency) {
          samples.get(name).push(...(await Promise.all(Array.from({ length: concurrency }, () => turn(stack)))));
        }
        floor.push(await direct(stack));
      }
    }
    for (const [name, values] of samples) {
      console.log(`| ${concurrency} | ${name} | ${values.length} | ${pct(values, 50).toFixed(1)} ms | ${pct(values, 95).toFixed(1)} ms | ${pct(floor, 50).toFixed(1)} ms |`);
    }
  }
} finally {
  for (const [, stack] of builds) await stack.stop();
}

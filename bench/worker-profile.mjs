// Benchmark (not a test): what a turn costs the Worker's isolate in CPU, from a CPU profile taken
// through workerd's inspector (Chrome DevTools protocol `Profiler`) while turns run, and the
// isolate's throughput. workerd via miniflare on loopback, one isolate serving the Worker and its
// Durable Objects (as locally; in production the objects run elsewhere); a build of the Worker
// optimized as the shipped one but keeping function names (from target/worker-names).
// Bounded: a fixed number of turns; the stack stops at the end.
//
// Usage: node bench/worker-profile.mjs [guided|guided-fake|assistant] [turns=200]
//   guided       guided turns answered by the offline provider (no upstream)
//   guided-fake  guided turns answered by the fake OpenAI-compatible provider (20 lines)
//   assistant    assistant turns without tools, offline provider
//   stream       guided turns answered by the fake provider in 400 lines (the cost of forwarding)
// With `guided`, the same turns are then sent to bench/floor-worker.mjs (a plain JS Worker making
// the same runtime calls and nothing else): the Worker's own CPU is what it spends beyond that.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { asOwner, newOwner, startStack, wranglerConfig } from "../tests/e2e/harness.mjs";
import { connect, profileWhile, summarize } from "./cdp.mjs";
import { namedBuild } from "./named-worker.mjs";

const ROOT = new URL("../", import.meta.url).pathname;
const scenario = process.argv[2] ?? "guided";
const turns = Number(process.argv[3] ?? 200);
/** Turns run before anything is measured (V8 optimizes only code it found hot), then one at a
 * time, then many in flight. */
const COUNTS = scenario === "stream"
  ? { warmUp: 60, sequential: 20, parallel: 60, inFlight: 10 }
  : { warmUp: 600, sequential: 100, parallel: 400, inFlight: 50 };
const WARM_UP = COUNTS.warmUp;
const LINES = scenario === "stream" ? 400 : 20;
const REPLY = Array.from({ length: LINES }, (_, i) => `line ${i} of the answer\n`).join("");

const bodies = {
  guided: () => ({ path: "/api/chat", body: { provider: "offline", message: "Track rivals", current_step: "purpose", current_config: {}, conversation_history: [] } }),
  stream: () => ({ path: "/api/chat", body: { provider: "fake-openai", message: "Track rivals", current_step: "purpose", current_config: {}, conversation_history: [] } }),
  "guided-fake": () => ({ path: "/api/chat", body: { provider: "fake-openai", message: "Track rivals", current_step: "purpose", current_config: {}, conversation_history: [] } }),
  assistant: () => ({ path: "/api/assistant", body: { provider: "offline", message: "Hello, what can you do?", context: { current_page: "research" } } }),
};
if (!bodies[scenario]) throw new Error(`unknown scenario ${scenario}`);

/** One turn as a fresh owner (so per-owner limits and objects do not serialize the run). */
async function turn(base) {
  const { path, body } = bodies[scenario]();
  const response = await fetch(base + path, { method: "POST", headers: { accept: "text/event-stream", "content-type": "application/json", ...asOwner(newOwner()) }, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 200 || !text.includes("event: complete")) throw new Error(`turn failed: ${response.status} ${text.slice(0, 300)}`);
}

/** CPU seconds (user + system) used so far by the workerd processes this one started. */
function workerdCpu() {
  const ticks = Number(execFileSync("getconf", ["CLK_TCK"]).toString());
  const pids = execFileSync("ps", ["-eo", "pid,ppid,comm", "--no-headers"]).toString().trim().split("\n")
    .map((line) => line.trim().split(/\s+/)).filter(([, , comm]) => comm === "workerd").map(([pid]) => pid);
  let total = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    total += (Number(fields[11]) + Number(fields[12])) / ticks;
  }
  return total;
}

async function run(base, count, inFlight) {
  let left = count;
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (left-- > 0) await turn(base);
  }));
  return (performance.now() - started) / 1000;
}

/** Runs the floor Worker on Miniflare with the same rate limits, and measures the same turns. */
async function floor() {
  const require = createRequire(join(ROOT, "node_modules/wrangler/package.json"));
  const { Miniflare, convertV4MiniflareOptions, Log, LogLevel } = require("miniflare");
  const limit = (namespace_id) => ({ namespace_id, simple: { limit: 1_000_000, period: 60 } });
  const mf = new Miniflare(convertV4MiniflareOptions({
    host: "127.0.0.1", port: 0, cf: false, log: new Log(LogLevel.WARN),
    workers: [{
      name: "floor", modules: [{ type: "ESModule", path: join(ROOT, "bench/floor-worker.mjs") }], modulesRoot: join(ROOT, "bench"),
      compatibilityDate: wranglerConfig().compatibility_date,
      ratelimits: { OWNER_RATE_LIMIT: limit("1001"), IP_RATE_LIMIT: limit("1002") },
      durableObjects: { FLOOR: { className: "Floor", useSQLite: true } },
    }],
  }));
  const base = (await mf.ready).origin;
  try {
    await run(base, WARM_UP, COUNTS.inFlight);
    const cpuBefore = workerdCpu();
    await run(base, COUNTS.sequential, 1);
    const cpuSequential = workerdCpu() - cpuBefore;
    await run(base, COUNTS.parallel, COUNTS.inFlight);
    const cpuParallel = workerdCpu() - cpuBefore - cpuSequential;
    return { sequential: (cpuSequential * 1000) / COUNTS.sequential, parallel: (cpuParallel * 1000) / COUNTS.parallel };
  } finally {
    await mf.dispose();
  }
}

const workerDir = namedBuild();
const profiling = process.env.PROFILE !== "0";
const inspectorPort = profiling ? 9300 + Math.floor(Math.random() * 500) : undefined;
let ours;
const stack = await startStack({ runtime: "miniflare", inspectorPort, workerDir, overrides: { LLM_TIMEOUT_MS: "30000" } });
try {
  stack.fake.script({ reply: REPLY, paced: true });
  // V8 compiles wasm and JS in tiers, the optimizing one only for code found hot: a few hundred
  // turns first, so every figure is of the isolate as it serves a steady load.
  await run(stack.base, WARM_UP, COUNTS.inFlight);
  if (profiling) await profile(stack);
  const cpuBefore = workerdCpu();
  const { sequential: one, parallel: many, inFlight } = COUNTS;
  const sequential = await run(stack.base, one, 1);
  const cpuSequential = workerdCpu() - cpuBefore;
  const parallel = await run(stack.base, many, inFlight);
  const cpuParallel = workerdCpu() - cpuBefore - cpuSequential;
  console.log(`\nthroughput of one isolate: ${(one / sequential).toFixed(0)} turns/s one at a time (${one} turns), ${(many / parallel).toFixed(0)} turns/s at ${inFlight} in flight (${many} turns)`);
  console.log(`workerd process CPU (all threads, no profiler): ${((cpuSequential * 1000) / one).toFixed(2)} ms per turn one at a time, ${((cpuParallel * 1000) / many).toFixed(2)} ms at ${inFlight} in flight`);
  ours = { sequential: (cpuSequential * 1000) / one, parallel: (cpuParallel * 1000) / many };
} finally {
  await stack.stop();
  rmSync(workerDir, { recursive: true, force: true });
}
if (scenario === "guided") {
  const base = await floor();
  console.log(`the floor (bench/floor-worker.mjs, the same runtime calls): ${base.sequential.toFixed(2)} ms per turn one at a time, ${base.parallel.toFixed(2)} ms at ${COUNTS.inFlight} in flight`);
  console.log(`**the Worker's own CPU per turn: ${(ours.sequential - base.sequential).toFixed(2)} ms one at a time, ${(ours.parallel - base.parallel).toFixed(2)} ms at ${COUNTS.inFlight} in flight**`);
}

async function profile(stack) {
  const cdp = await connect(stack.inspector);
  const profile = await profileWhile(cdp, () => run(stack.base, turns, 1));
  if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
  const summary = summarize(profile);
  const all = turns;
  console.log(`scenario ${scenario}: ${all} turns one at a time after ${WARM_UP} warm-up turns, workerd via miniflare`);
  console.log(`isolate CPU: ${(summary.activeUs / 1000).toFixed(1)} ms active of ${(summary.sampledUs / 1000).toFixed(1)} ms sampled: **${(summary.activeUs / 1000 / all).toFixed(3)} ms per turn** (Worker and its Durable Objects)\n`);
  console.log("| self ms | self % | total ms | function |\n|---:|---:|---:|---|");
  for (const row of summary.rows.filter((r) => r.name !== "(idle)").slice(0, 30)) {
    console.log(`| ${(row.selfUs / 1000).toFixed(1)} | ${((100 * row.selfUs) / summary.activeUs).toFixed(1)} | ${(row.totalUs / 1000).toFixed(1)} | \`${row.name.slice(0, 110)}\` |`);
  }
  cdp.close();
}

// Benchmark (not a test): the Worker's CPU per turn, by turn kind, median and p95, from a CPU
// profile of workerd's isolate (the inspector's `Profiler`, bench/cdp.mjs).
//
// Cloudflare meters each invocation's CPU and reports it to Tail Workers as `cpuTime`; the local
// runtime reports 0 there for every invocation (workerd's `RequestObserverWithTracer` passes a
// zero CPU time to `setOutcome`; checked under `wrangler dev` with a tail consumer for fetch,
// Durable Object and queue invocations: bench/README.md). So the figure here is the isolate's
// own: turns are sent one at a time, each waited for to its end (the answer's last event, or a
// research job's `completed`), with a pause between them; the profile's samples then fall in one
// burst per turn, and a burst's busy time is that turn's CPU, all its invocations together (the
// Worker's request, its Durable Objects' requests and alarms, the queue batches): an upper bound
// of any one invocation's. workerd via miniflare on loopback, the shipped build keeping names.
// Bounded: a fixed number of turns per kind; the stack stops at the end.
//
// Usage: node bench/worker-cpu.mjs [turns per kind = 40] [kind ...]   (TOP=N lists N own functions
// per kind, 6 by default; WORKER_NAMES_DIR=DIR profiles another build's names-keeping wasm)
import { rmSync } from "node:fs";
import { asOwner, newOwner, parseSse, startStack } from "../tests/e2e/harness.mjs";
import { connect, profileWhile } from "./cdp.mjs";
import { namedBuild } from "./named-worker.mjs";

const TURNS = Number(process.argv[2] ?? 40);
const WARM_UP = 60;
/** Quiet time after each turn, so that bursts do not touch. */
const PAUSE_MS = 40;
/** A gap this long with no busy sample ends a burst. */
const GAP_US = 15_000;
const SAMPLING_US = 100;
const REPLY = Array.from({ length: 20 }, (_, i) => `line ${i} of the answer\n`).join("");

let base;
let fake;
const post = (path, body, owner, accept = "text/event-stream") =>
  fetch(base + path, { method: "POST", headers: { accept, "content-type": "application/json", ...asOwner(owner) }, body: JSON.stringify(body) });

/** Sends a streamed turn and reads it to its last event; returns the `complete` event's data. */
async function streamed(path, body, owner = newOwner()) {
  const response = await post(path, body, owner);
  const text = await response.text();
  const complete = parseSse(text).find((event) => event.event === "complete");
  if (response.status !== 200 || !complete) throw new Error(`${path}: ${response.status} ${text.slice(0, 300)}`);
  return complete.data;
}

const guidedFirst = { provider: "offline", message: "Track rivals", current_step: "purpose", current_config: {}, conversation_history: [] };

/** Each kind: `setup()` once (the fake provider's script), then `turn()` as many times as asked. */
const KINDS = {
  "guided, first turn": { turn: () => streamed("/api/chat", guidedFirst) },
  "guided, later turn": {
    async turn() {
      const owner = newOwner();
      const first = await streamed("/api/chat", guidedFirst, owner);
      return () => streamed("/api/chat", { provider: "offline", conversation_id: first.conversation_id, turns: first.turns, message: "Launches, pricing",
        current_step: first.next_step, current_config: first.updated_config, conversation_history: [] }, owner);
    },
    measuresSecond: true,
  },
  "assistant, no tool": { turn: () => streamed("/api/assistant", { provider: "offline", message: "Hello, what can you do?", context: { current_page: "research" } }) },
  "assistant, one tool round": {
    setup: () => fake.script((request) => {
      const replied = (request.body?.messages ?? []).some((m) => m.role === "tool");
      return replied ? { reply: "You have no research jobs yet.", paced: true } : { reply: "Let me look.", paced: true, toolCalls: [{ name: "list_research", arguments: {} }] };
    }),
    turn: () => streamed("/api/assistant", { provider: "fake-openai", message: "What research have I run?", context: { current_page: "research" } }),
  },
  "help desk": {
    setup: () => fake.script(() => ({ reply: "Open Settings and choose the provider.", paced: true })),
    async turn() {
      const response = await post("/api/help", { message: "How do I change the model provider?" }, newOwner(), "application/json");
      if (response.status !== 200) throw new Error(`help: ${response.status} ${await response.text()}`);
    },
  },
  "research job (start, 2 providers and synthesis: queue batches included)": {
    setup: () => fake.script(() => ({ reply: "A short finding.", paced: true })),
    async turn() {
      const owner = newOwner();
      const draft = await post("/api/research/draft", { prompt: "How do EGFR inhibitors compare?", selected_llms: ["fake-openai", "fake-anthropic"], synthesis_llm: "fake-gemini" }, owner, "application/json");
      const { id } = await draft.json();
      if (draft.status !== 201) throw new Error(`draft: ${draft.status}`);
      const start = await post("/api/research", { research_id: id }, owner, "application/json");
      if (start.status !== 200) throw new Error(`start: ${start.status} ${await start.text()}`);
      // Few status reads (each is an invocation of its own): the job's calls answer at once.
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (let tries = 0; tries < 75; tries++) {
        const job = await (await fetch(`${base}/api/research/${id}`, { headers: asOwner(owner) })).json();
        if (job.status === "completed") return;
        if (job.status === "failed") throw new Error(`research failed: ${JSON.stringify(job).slice(0, 300)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error("research did not complete in 15 s");
    },
  },
};

/** The sampler's real interval: the median gap between samples that follow each other closely
 * (workerd takes no sample while the isolate waits, so a long gap is a wait, not work). */
function interval(profile) {
  const close = profile.timeDeltas.filter((delta) => delta > 0 && delta < 10 * SAMPLING_US).sort((a, b) => a - b);
  return close[Math.floor(close.length / 2)] ?? SAMPLING_US;
}

/** The busy microseconds of each burst of samples, and of them the Worker's own (a sample whose
 * running function is the Worker's wasm or its JS glue, `index.js`; the rest is the runtime's
 * JS, garbage collection and native code). Each sample stands for one sampling interval: the
 * time until the next sample can be a wait, which costs no CPU. Also the Worker's own functions
 * with the most samples. */
function bursts(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const step = interval(profile);
  const result = [];
  const functions = new Map();
  let at = profile.startTime;
  let current = null;
  let lastBusy = -Infinity;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i];
    const { functionName, url } = nodes.get(id).callFrame;
    if (functionName === "(idle)") return;
    if (at - lastBusy > GAP_US && current) {
      result.push(current);
      current = null;
    }
    current ??= { busy: 0, own: 0 };
    current.busy += step;
    if (url.startsWith("wasm://") || url.endsWith("index.js")) {
      current.own += step;
      functions.set(functionName, (functions.get(functionName) ?? 0) + step);
    }
    lastBusy = at;
  });
  if (current) result.push(current);
  const top = [...functions.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 6));
  return { found: result, top, step };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

const chosen = process.argv.slice(3);
const workerDir = namedBuild();
const stack = await startStack({ runtime: "miniflare", inspectorPort: 9300 + Math.floor(Math.random() * 500), workerDir, overrides: { LLM_TIMEOUT_MS: "30000" } });
base = stack.base;
fake = stack.fake;
const rows = [];
try {
  const cdp = await connect(stack.inspector);
  for (const [name, kind] of Object.entries(KINDS)) {
    if (chosen.length && !chosen.some((word) => name.startsWith(word))) continue;
    // Paced: one write per SSE event, as providers send them (unpaced, the fake cuts its
    // writes every few bytes to test decoders, and the reads of those cuts dominate the CPU).
    fake.script({ reply: REPLY, paced: true });
    kind.setup?.();
    const once = async () => {
      const second = await kind.turn();
      if (kind.measuresSecond) return second;
      return undefined;
    };
    // V8 optimizes only code it found hot: warm-up turns first, unmeasured.
    for (let i = 0; i < WARM_UP / (kind.measuresSecond ? 2 : 1); i++) {
      const second = await once();
      if (second) await second();
    }
    const measured = [];
    // The first turn of a later-turn pair runs outside the profile: only the second is measured.
    for (let i = 0; i < TURNS; i++) measured.push(kind.measuresSecond ? await once() : null);
    const profile = await profileWhile(cdp, async () => {
      for (let i = 0; i < TURNS; i++) {
        if (kind.measuresSecond) await measured[i]();
        else await kind.turn();
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
    }, SAMPLING_US);
    const { found, top, step } = bursts(profile);
    const ms = (key) => found.map((burst) => burst[key] / 1000).sort((a, b) => a - b);
    const sum = (key) => found.reduce((total, burst) => total + burst[key], 0) / 1000 / TURNS;
    const [busy, own] = [ms("busy"), ms("own")];
    rows.push({ name, bursts: found.length, busyPerTurn: sum("busy"), ownPerTurn: sum("own"),
      median: percentile(busy, 0.5), p95: percentile(busy, 0.95), ownMedian: percentile(own, 0.5), ownP95: percentile(own, 0.95) });
    console.error(`${name}: ${found.length} bursts for ${TURNS} turns (a sample every ${step} µs); the Worker's own functions with the most self time:`);
    for (const [fn, us] of top) console.error(`  ${(us / 1000 / TURNS).toFixed(3)} ms per turn  ${fn.replace(/::h[0-9a-f]{16}$/, "").slice(0, 120)}`);
  }
  cdp.close();
} finally {
  await stack.stop();
  rmSync(workerDir, { recursive: true, force: true });
}
console.log(`\nIsolate CPU per turn, all its invocations together (${TURNS} turns per kind after ${WARM_UP} warm-up turns, sampling every ${SAMPLING_US} µs): per turn (all bursts ÷ turns), and per burst, median and p95; "own" is the self time of the Worker's wasm and JS glue\n`);
console.log("| turn kind | bursts | busy ms per turn | own ms per turn | burst median | burst p95 | own median | own p95 |\n|---|---:|---:|---:|---:|---:|---:|---:|");
const f = (value) => value?.toFixed(2);
for (const row of rows) {
  console.log(`| ${row.name} | ${row.bursts} | ${f(row.busyPerTurn)} | ${f(row.ownPerTurn)} | ${f(row.median)} | ${f(row.p95)} | ${f(row.ownMedian)} | ${f(row.ownP95)} |`);
}

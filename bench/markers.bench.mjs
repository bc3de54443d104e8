// Benchmark (not a test): the wasm MarkerStream against what streaming frontends do today, in one
// node process on the same inputs and chunkings, at every chunk size from 1 B to 64 KiB:
//   (a) `parsePartialJson` from the `ai` package on the accumulated buffer after every chunk;
//   (b) a plain JS line-marker parser that re-runs its regexes over the accumulated text.
// With `--before DIR` it also runs another build of the package (e.g. one built from an earlier
// commit by `scripts/build-wasm.sh --out DIR`) on the same inputs, cell by cell beside this one.
// Prints markdown tables: ns per chunk, MB/s, ratios to the baselines, and doubling ratios.
// Usage: node bench/markers.bench.mjs [--before DIR] [--sizes 1,16,1024]   (BENCH_MS: time a cell)
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parsePartialJson } from "ai";
import { MarkerStream, repoFile } from "../crates/wasm/js-tests/load.mjs";
import { regexRescan } from "./regex-rescan.mjs";

const REPLY = repoFile("fixtures/reply-2k.txt");
const SCHEMA = repoFile("fixtures/schema-64k.txt");
const PAYLOAD_START = SCHEMA.indexOf("SCHEMA_PROPOSAL:") + "SCHEMA_PROPOSAL:".length;
const budgetMs = Number(process.env.BENCH_MS ?? 1000);
const argument = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const SIZES = (argument("--sizes") ?? "1,4,16,64,256,1024,4096,16384,65536").split(",").map(Number);
// The O(n²) baselines re-scan the whole 64 KiB payload per chunk: below this chunk size one run
// takes tens of seconds, and the ratio is in the thousands anyway.
const PAYLOAD_BASELINE_MIN = 64;

/** The package built elsewhere (`--before DIR`), loaded beside this one. */
async function loadBefore(dir) {
  const module = await import(resolve(dir, "stepwise.js"));
  module.initSync({ module: readFileSync(resolve(dir, "stepwise_bg.wasm")) });
  return module.MarkerStream;
}
const beforeDir = argument("--before");
const Before = beforeDir ? await loadBefore(beforeDir) : undefined;

function split(text, size) {
  const chunks = [];
  for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size));
  return chunks;
}

/** A wasm parser: feed every chunk, then finish. */
const streamWith = (Stream) => (chunks) => {
  const stream = new Stream(["SCHEMA_PROPOSAL"]);
  let events = 0;
  for (const chunk of chunks) events += stream.feed(chunk).length;
  return events + stream.finish().payloads.length;
};
const wasm = streamWith(MarkerStream);
const before = Before && streamWith(Before);

/** Baseline (a): parsePartialJson of the accumulated payload text after every chunk. */
async function partialJson(chunks) {
  let buffer = "";
  let last;
  for (const chunk of chunks) {
    buffer += chunk;
    if (buffer.length > PAYLOAD_START) last = await parsePartialJson(buffer.slice(PAYLOAD_START));
  }
  return last?.state;
}

/** Runs `fn(chunks)` in up to ROUNDS rounds of about `budgetMs / ROUNDS` each and returns the
 * best round's ms per run: this machine's timings vary from one moment to the next, and the
 * fastest round is the one least disturbed. A slow baseline (seconds a run) gets two rounds. */
const ROUNDS = 5;
async function time(fn, chunks) {
  await fn(chunks); // warm up
  let best = Infinity;
  let total = 0;
  for (let round = 0; round < ROUNDS && (round < 2 || total < budgetMs * 2); round++) {
    let runs = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (runs < 1 || elapsed < budgetMs / ROUNDS) {
      await fn(chunks);
      runs++;
      elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    }
    total += elapsed;
    best = Math.min(best, elapsed / runs);
  }
  return best;
}

const inputs = [
  ["reply 2 KB", REPLY, false],
  ["payload 64 KiB", SCHEMA, true],
];
const ns = (ms, chunks) => ((ms * 1e6) / chunks.length).toFixed(0);
const ratio = (ms, wasmMs) => (ms === undefined ? "—" : `${(ms / wasmMs).toFixed(2)}x`);

console.log(`node ${process.version}; each cell the best of ${ROUNDS} rounds of about ${budgetMs / ROUNDS} ms`);
console.log(Before ? `before: ${beforeDir}\n` : "");
console.log(
  "| input | chunk | wasm ns/chunk | wasm MB/s |" + (Before ? " before ns/chunk | before ÷ wasm |" : "") +
    " (b) regex ns/chunk | (b) ÷ wasm | (a) ÷ wasm |",
);
console.log("|---|---:|---:|---:|" + (Before ? "---:|---:|" : "") + "---:|---:|---:|");
for (const [inputName, text, isPayload] of inputs) {
  for (const size of SIZES) {
    const chunks = split(text, size);
    // Interleaved: each build, then again, so that a slow moment of the machine hits both.
    let wasmMs = await time(wasm, chunks);
    let beforeMs = before && (await time(before, chunks));
    wasmMs = Math.min(wasmMs, await time(wasm, chunks));
    if (before) beforeMs = Math.min(beforeMs, await time(before, chunks));
    const baselines = !isPayload || size >= PAYLOAD_BASELINE_MIN;
    const regexMs = baselines ? await time(regexRescan, chunks) : undefined;
    const partialMs = isPayload && baselines ? await time(partialJson, chunks) : undefined;
    const mbs = Buffer.byteLength(text) / 1e6 / (wasmMs / 1e3);
    const beforeCells = before ? ` ${ns(beforeMs, chunks)} | ${ratio(beforeMs, wasmMs)} |` : "";
    const regexCell = regexMs === undefined ? "—" : ns(regexMs, chunks);
    console.log(
      `| ${inputName} | ${size} B | ${ns(wasmMs, chunks)} | ${mbs.toFixed(1)} |${beforeCells} ${regexCell} | ${ratio(regexMs, wasmMs)} | ${ratio(partialMs, wasmMs)} |`,
    );
  }
}

console.log("\nDoubling the input (16 B chunks): time(2n) ÷ time(n); linear work stays near 2.0\n");
console.log("| input | method | time(n) ms | time(2n) ms | ratio |");
console.log("|---|---|---:|---:|---:|");
const doubled = [
  ["reply ×8 → ×16", REPLY.repeat(8), REPLY.repeat(16)],
  ["payload ×1 → ×2", SCHEMA, SCHEMA.repeat(2)],
];
for (const [inputName, once, twice] of doubled) {
  for (const [name, fn] of [["wasm MarkerStream", wasm], ["(b) regex re-scan", regexRescan]]) {
    const a = await time(fn, split(once, 16));
    const b = await time(fn, split(twice, 16));
    console.log(`| ${inputName} | ${name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)} |`);
  }
}

// Benchmark (not a test): the wasm MarkerStream against what streaming frontends do today, in one
// node process on the same inputs and chunkings:
//   (a) `parsePartialJson` from the `ai` package on the accumulated buffer after every chunk;
//   (b) a plain JS line-marker parser that re-runs its regexes over the accumulated text.
// Prints a markdown table: ns per chunk, MB/s, ratios to the baselines, and doubling ratios.
import { parsePartialJson } from "ai";
import { MarkerStream, repoFile } from "../crates/wasm/js-tests/load.mjs";

const REPLY = repoFile("fixtures/reply-2k.txt");
const SCHEMA = repoFile("fixtures/schema-64k.txt");
const PAYLOAD_START = SCHEMA.indexOf("SCHEMA_PROPOSAL:") + "SCHEMA_PROPOSAL:".length;
const budgetMs = Number(process.env.BENCH_MS ?? 1000);

function split(text, size) {
  const chunks = [];
  for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size));
  return chunks;
}

/** The wasm parser: feed every chunk, then finish. */
function wasm(chunks) {
  const stream = new MarkerStream(["SCHEMA_PROPOSAL"]);
  let events = 0;
  for (const chunk of chunks) events += stream.feed(chunk).length;
  return events + stream.finish().payloads.length;
}

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

/** Baseline (b): re-run line-marker regexes over the accumulated text after every chunk. */
const LINE = /^[ \t]*(?:[-*+] )?\**(SUGGESTIONS|OPTIONS|EXTRACTED_DATA|PROPOSED_MESSAGE|TARGET_FIELD)\**:\**[ \t]*(.*)$/gm;
const PAYLOAD = /^[ \t]*SCHEMA_PROPOSAL:\s*([\s\S]*)$/m;
function regexRescan(chunks) {
  let buffer = "";
  let result;
  for (const chunk of chunks) {
    buffer += chunk;
    const markers = {};
    for (const match of buffer.matchAll(LINE)) markers[match[1]] = match[2];
    let payload;
    const body = PAYLOAD.exec(buffer);
    if (body) {
      try {
        payload = JSON.parse(body[1].slice(0, body[1].lastIndexOf("}") + 1));
      } catch {
        payload = undefined;
      }
    }
    const display = buffer.replace(LINE, "").replace(PAYLOAD, "");
    result = { markers, payload, display };
  }
  return result;
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

const methods = [
  ["wasm MarkerStream", wasm],
  ["(a) ai parsePartialJson", partialJson],
  ["(b) regex re-scan", regexRescan],
];
const inputs = [
  ["reply 2 KB", REPLY, false],
  ["payload 64 KiB", SCHEMA, true],
];

console.log(`node ${process.version}; each cell the best of ${ROUNDS} rounds of about ${budgetMs / ROUNDS} ms\n`);
console.log("| input | chunk | method | ns/chunk | MB/s | baseline time ÷ wasm time |");
console.log("|---|---:|---|---:|---:|---:|");
const wasmMs = {};
for (const [inputName, text, isPayload] of inputs) {
  for (const size of [4, 16, 1024]) {
    const chunks = split(text, size);
    for (const [name, fn] of methods) {
      if (!isPayload && fn === partialJson) continue; // the reply has no JSON to parse
      const ms = await time(fn, chunks);
      const key = `${inputName}/${size}`;
      if (fn === wasm) wasmMs[key] = ms;
      const ratio = fn === wasm ? "—" : `${(ms / wasmMs[key]).toFixed(1)}x`;
      const mbs = Buffer.byteLength(text) / 1e6 / (ms / 1e3);
      console.log(`| ${inputName} | ${size} B | ${name} | ${((ms * 1e6) / chunks.length).toFixed(0)} | ${mbs.toFixed(1)} | ${ratio} |`);
    }
  }
}

console.log("\nDoubling the input (16 B chunks): time(2n) ÷ time(n); linear work stays near 2.0\n");
console.log("| input | method | time(n) ms | time(2n) ms | ratio |");
console.log("|---|---|---:|---:|---:|");
const doubled = [
  ["reply ×8 → ×16", REPLY.repeat(8), REPLY.repeat(16), [wasm, regexRescan]],
  ["payload ×1 → ×2", SCHEMA, SCHEMA.repeat(2), [wasm, regexRescan]],
];
for (const [inputName, once, twice, fns] of doubled) {
  for (const fn of fns) {
    const name = methods.find(([, f]) => f === fn)[0];
    const a = await time(fn, split(once, 16));
    const b = await time(fn, split(twice, 16));
    console.log(`| ${inputName} | ${name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)} |`);
  }
}

// The marker benchmark itself, shared by the node run (bench/markers.bench.mjs) and the Chromium
// run (bench/markers.chromium.mjs): the same inputs, chunkings, timing and tables in both. It
// touches no node or browser API beyond `performance.now`; the caller gives the streams to time,
// the texts and a `log` for each table line.
import { regexRescan } from "./regex-rescan.mjs";

/** Every chunk size the tables cover, 1 B to 64 KiB. */
export const SIZES = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536];
const ROUNDS = 5;
// The O(n²) baselines re-scan the whole 64 KiB payload per chunk: below this chunk size one run
// takes tens of seconds, and the ratio is in the thousands anyway.
const PAYLOAD_BASELINE_MIN = 64;

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

/** Runs `fn(chunks)` in up to ROUNDS rounds of about `budgetMs / ROUNDS` each and returns the
 * best round's ms per run: the machine's timings vary from one moment to the next, and the
 * fastest round is the one least disturbed. A slow baseline (seconds a run) gets two rounds. */
async function time(fn, chunks, budgetMs) {
  await fn(chunks); // warm up
  let best = Infinity;
  let total = 0;
  for (let round = 0; round < ROUNDS && (round < 2 || total < budgetMs * 2); round++) {
    let runs = 0;
    const start = performance.now();
    let elapsed = 0;
    while (runs < 1 || elapsed < budgetMs / ROUNDS) {
      await fn(chunks);
      runs++;
      elapsed = performance.now() - start;
    }
    total += elapsed;
    best = Math.min(best, elapsed / runs);
  }
  return best;
}

/**
 * Times `MarkerStream` (and `Before`, another build, when given) against the regex re-scan and,
 * for the payload, `partialJson` (the `ai` package's `parsePartialJson`, when given), at each
 * chunk size; then the doubling check. `reply` and `schema` are the fixtures' texts.
 */
export async function runMarkerBench({ MarkerStream, Before, partialJson, reply, schema, sizes, budgetMs, log }) {
  const wasm = streamWith(MarkerStream);
  const before = Before && streamWith(Before);
  const payloadStart = schema.indexOf("SCHEMA_PROPOSAL:") + "SCHEMA_PROPOSAL:".length;
  const partial = partialJson && (async (chunks) => {
    let buffer = "";
    let last;
    for (const chunk of chunks) {
      buffer += chunk;
      if (buffer.length > payloadStart) last = await partialJson(buffer.slice(payloadStart));
    }
    return last?.state;
  });
  const bytes = (text) => new TextEncoder().encode(text).length;
  const ns = (ms, chunks) => ((ms * 1e6) / chunks.length).toFixed(0);
  const ratio = (ms, wasmMs) => (ms === undefined ? "—" : `${(ms / wasmMs).toFixed(2)}x`);

  log(`each cell the best of ${ROUNDS} rounds of about ${budgetMs / ROUNDS} ms`);
  log("");
  log("| input | chunk | wasm ns/chunk | wasm MB/s |" + (before ? " before ns/chunk | before ÷ wasm |" : "") +
    " (b) regex ns/chunk | (b) ÷ wasm | (a) ÷ wasm |");
  log("|---|---:|---:|---:|" + (before ? "---:|---:|" : "") + "---:|---:|---:|");
  for (const [inputName, text, isPayload] of [["reply 2 KB", reply, false], ["payload 64 KiB", schema, true]]) {
    for (const size of sizes) {
      const chunks = split(text, size);
      // Interleaved: each build, then again, so that a slow moment of the machine hits both.
      let wasmMs = await time(wasm, chunks, budgetMs);
      let beforeMs = before && (await time(before, chunks, budgetMs));
      wasmMs = Math.min(wasmMs, await time(wasm, chunks, budgetMs));
      if (before) beforeMs = Math.min(beforeMs, await time(before, chunks, budgetMs));
      const baselines = !isPayload || size >= PAYLOAD_BASELINE_MIN;
      const regexMs = baselines ? await time(regexRescan, chunks, budgetMs) : undefined;
      const partialMs = partial && isPayload && baselines ? await time(partial, chunks, budgetMs) : undefined;
      const mbs = bytes(text) / 1e6 / (wasmMs / 1e3);
      const beforeCells = before ? ` ${ns(beforeMs, chunks)} | ${ratio(beforeMs, wasmMs)} |` : "";
      const regexCell = regexMs === undefined ? "—" : ns(regexMs, chunks);
      log(`| ${inputName} | ${size} B | ${ns(wasmMs, chunks)} | ${mbs.toFixed(1)} |${beforeCells} ${regexCell} | ${ratio(regexMs, wasmMs)} | ${ratio(partialMs, wasmMs)} |`);
    }
  }

  log("");
  log("Doubling the input (16 B chunks): time(2n) ÷ time(n); linear work stays near 2.0");
  log("");
  log("| input | method | time(n) ms | time(2n) ms | ratio |");
  log("|---|---|---:|---:|---:|");
  for (const [inputName, once, twice] of [["reply ×8 → ×16", reply.repeat(8), reply.repeat(16)], ["payload ×1 → ×2", schema, schema.repeat(2)]]) {
    for (const [name, fn] of [["wasm MarkerStream", wasm], ["(b) regex re-scan", regexRescan]]) {
      const a = await time(fn, split(once, 16), budgetMs);
      const b = await time(fn, split(twice, 16), budgetMs);
      log(`| ${inputName} | ${name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)} |`);
    }
  }
}

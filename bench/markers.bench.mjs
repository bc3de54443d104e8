// Benchmark (not a test): the wasm MarkerStream in node against what streaming frontends do today,
// in one process on the same inputs and chunkings, at every chunk size from 1 B to 64 KiB
// (bench/markers-run.mjs; bench/markers.chromium.mjs runs the same in headless Chromium):
//   (a) `parsePartialJson` from the `ai` package on the accumulated buffer after every chunk;
//   (b) a plain JS line-marker parser that re-runs its regexes over the accumulated text.
// With `--before DIR` it also runs another build of the package (e.g. one built from an earlier
// commit by `scripts/build-wasm.sh --out DIR`) on the same inputs, cell by cell beside this one.
// Usage: node bench/markers.bench.mjs [--before DIR] [--sizes 1,16,1024]   (BENCH_MS: time a cell)
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parsePartialJson } from "ai";
import { MarkerStream, repoFile } from "../crates/wasm/js-tests/load.mjs";
import { SIZES, runMarkerBench } from "./markers-run.mjs";

const argument = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};

/** The package built elsewhere (`--before DIR`), loaded beside this one. */
async function loadBefore(dir) {
  const module = await import(resolve(dir, "stepwise.js"));
  module.initSync({ module: readFileSync(resolve(dir, "stepwise_bg.wasm")) });
  return module.MarkerStream;
}

const beforeDir = argument("--before");
console.log(`node ${process.version}` + (beforeDir ? `; before: ${beforeDir}` : ""));
await runMarkerBench({
  MarkerStream,
  Before: beforeDir ? await loadBefore(beforeDir) : undefined,
  partialJson: parsePartialJson,
  reply: repoFile("fixtures/reply-2k.txt"),
  schema: repoFile("fixtures/schema-64k.txt"),
  sizes: argument("--sizes")?.split(",").map(Number) ?? SIZES,
  budgetMs: Number(process.env.BENCH_MS ?? 1000),
  log: (line) => console.log(line),
});

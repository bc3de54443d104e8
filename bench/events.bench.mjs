// Benchmark (not a test): marker events built by hand (the package) against the same package
// built with feature `serde-events` (every event and the whole parse written by
// serde-wasm-bindgen), in one node process on the same inputs. It decides whether the package
// keeps its one hand-built path (crates/wasm/src/events.rs); every other value crosses the
// boundary through serde-wasm-bindgen.
// Usage: node bench/events.bench.mjs   (builds the variant into target/pkg-serde-events first;
// the package must be built: scripts/build-wasm.sh). BENCH_MS sets the time per cell.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

const ROOT = new URL("../", import.meta.url);
const budgetMs = Number(process.env.BENCH_MS ?? 1000);
const VARIANT = "target/pkg-serde-events";

const build = spawnSync("scripts/build-wasm.sh", ["--features", "serde-events", "--out", VARIANT], {
  cwd: ROOT,
  stdio: ["ignore", "ignore", "inherit"],
});
if (build.status !== 0) throw new Error(`building the serde-events variant failed (${build.status})`);

async function load(dir) {
  const pkg = await import(new URL(`${dir}/stepwise.js`, ROOT));
  pkg.initSync({ module: readFileSync(new URL(`${dir}/stepwise_bg.wasm`, ROOT)) });
  return pkg;
}
const builds = [
  ["hand-built (the package)", await load("crates/wasm/pkg")],
  ["serde-wasm-bindgen", await load(VARIANT)],
];

const reply = readFileSync(new URL("tests/fixtures/reply-2k.txt", ROOT), "utf8");
// A marker on every other line: what a guided turn's answer carries at most.
const markerLines = [
  "Here is what I found.",
  "SUGGESTIONS: Track launches, Watch pricing, Follow hires",
  "Pick the closest one.",
  "OPTIONS: clinical | preclinical | regulatory",
  'EXTRACTED_DATA: {"field": "purpose", "value": "Track rivals"}',
  'SUGGESTED_VALUES: [{"label": "Weekly", "value": "weekly"}, {"label": "Daily", "value": "daily"}]',
];
const markerHeavy = Array.from({ length: 40 }, (_, i) => markerLines[i % markerLines.length]).join("\n") + "\n";

function split(text, size) {
  const chunks = [];
  for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size));
  return chunks;
}

function run(pkg, chunks) {
  const stream = new pkg.MarkerStream();
  let events = 0;
  for (const chunk of chunks) events += stream.feed(chunk).length;
  return events + stream.finish().suggestions.length;
}

/** Best of five rounds, ms per run. */
function time(fn) {
  fn();
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    let runs = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (runs < 1 || elapsed < budgetMs / 5) {
      fn();
      runs++;
      elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    }
    best = Math.min(best, elapsed / runs);
  }
  return best;
}

// Both builds must answer the same before they are timed.
for (const text of [reply, markerHeavy]) {
  const answers = builds.map(([, pkg]) => {
    const stream = new pkg.MarkerStream();
    const events = split(text, 16).flatMap((chunk) => stream.feed(chunk));
    return [events, stream.finish()];
  });
  if (!isDeepStrictEqual(answers[0], answers[1])) throw new Error("the two builds disagree");
}

console.log(`node ${process.version}; each cell the best of 5 rounds of about ${budgetMs / 5} ms\n`);
console.log("| input | chunk | events | hand-built µs/run | serde-wasm-bindgen µs/run | serde ÷ hand-built |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const [name, text] of [["reply 2 KB", reply], ["marker on every other line, 40 lines", markerHeavy]]) {
  for (const size of [4, 16, 1024]) {
    const chunks = split(text, size);
    const events = run(builds[0][1], chunks);
    const [hand, serde] = builds.map(([, pkg]) => time(() => run(pkg, chunks)) * 1e3);
    console.log(`| ${name} | ${size} B | ${events} | ${hand.toFixed(1)} | ${serde.toFixed(1)} | ${(serde / hand).toFixed(2)}x |`);
  }
}

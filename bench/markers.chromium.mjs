// Benchmark (not a test): bench/markers-run.mjs in headless Chromium, where the package lives: the
// same inputs, chunkings and baselines as the node run (bench/markers.bench.mjs), the package
// loaded by a page as a browser app loads it (`init()` fetching the wasm). Serves the package,
// the benchmark's modules and the fixtures on 127.0.0.1 (a free port), drives /usr/bin/chromium
// with playwright-core, prints the page's tables and stops. `parsePartialJson` is bundled from
// the `ai` package with esbuild (offline) for the page.
// Usage: node bench/markers.chromium.mjs [--before DIR] [--sizes 1,16,1024]   (BENCH_MS: time a cell)
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { SIZES } from "./markers-run.mjs";

const ROOT = new URL("../", import.meta.url).pathname;
const argument = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const beforeDir = argument("--before");
const sizes = argument("--sizes")?.split(",").map(Number) ?? SIZES;
const budgetMs = Number(process.env.BENCH_MS ?? 1000);

const scratch = join(ROOT, "target/bench-chromium");
mkdirSync(scratch, { recursive: true });
writeFileSync(join(scratch, "ai-entry.mjs"), 'export { parsePartialJson } from "ai";\n');
execFileSync(join(ROOT, "node_modules/.bin/esbuild"), [join(scratch, "ai-entry.mjs"), "--bundle", "--format=esm",
  "--platform=browser", `--outfile=${join(scratch, "ai.js")}`, "--log-level=warning"], { cwd: ROOT });

const page = `<!doctype html><meta charset="utf-8"><title>markers benchmark</title><script type="module">
import init, { MarkerStream } from "/pkg/stepwise.js";
import { runMarkerBench } from "/bench/markers-run.mjs";
import { parsePartialJson } from "/scratch/ai.js";
const options = ${JSON.stringify({ before: Boolean(beforeDir), sizes, budgetMs })};
try {
  await init({ module_or_path: "/pkg/stepwise_bg.wasm" });
  let Before;
  if (options.before) {
    const before = await import("/before/stepwise.js");
    await before.default({ module_or_path: "/before/stepwise_bg.wasm" });
    Before = before.MarkerStream;
  }
  const text = async (path) => (await fetch(path)).text();
  console.log(navigator.userAgent);
  await runMarkerBench({ MarkerStream, Before, partialJson: parsePartialJson, reply: await text("/fixtures/reply-2k.txt"),
    schema: await text("/fixtures/schema-64k.txt"), sizes: options.sizes, budgetMs: options.budgetMs, log: (line) => console.log(line) });
} catch (error) {
  console.log("benchmark failed: " + (error.stack ?? error));
}
window.benchDone = true;
</script>`;

const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".txt": "text/plain; charset=utf-8" };
const MOUNTS = { "/pkg/": join(ROOT, "crates/wasm/pkg"), "/bench/": join(ROOT, "bench"), "/fixtures/": join(ROOT, "tests/fixtures"), "/scratch/": scratch };
if (beforeDir) MOUNTS["/before/"] = resolve(beforeDir);
const server = createServer((request, response) => {
  const path = new URL(request.url, "http://127.0.0.1").pathname;
  if (path === "/") {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    return;
  }
  if (path === "/favicon.ico") {
    response.writeHead(204).end();
    return;
  }
  const mount = Object.keys(MOUNTS).find((prefix) => path.startsWith(prefix));
  const file = mount && resolve(MOUNTS[mount], "." + path.slice(mount.length - 1));
  if (!file || !file.startsWith(MOUNTS[mount])) {
    response.writeHead(404).end();
    return;
  }
  try {
    const body = readFileSync(file);
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(body);
  } catch {
    response.writeHead(404).end();
  }
});
await new Promise((ready) => server.listen(0, "127.0.0.1", ready));
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"] });
try {
  const tab = await browser.newPage();
  tab.on("console", (message) => console.log(message.text()));
  await tab.goto(`http://127.0.0.1:${server.address().port}/`);
  // Bounded: the page's own budget per cell, times the cells, with room to spare.
  await tab.waitForFunction(() => window.benchDone === true, null, { timeout: 30 * 60 * 1000, polling: 1000 });
} finally {
  await browser.close();
  server.close();
}

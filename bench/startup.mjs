// Benchmark (not a test): startup of the project's Worker beside a minimal workers-rs Worker
// (bench/minimal-worker), measured in one run, alternating between the two: time from spawning
// `wrangler dev --local` to the first 200 of `GET /healthz` (and the same on Miniflare driven
// directly), and `WebAssembly.compile` of each Worker's wasm in node, lazy (V8's default) and
// eager (`--no-liftoff --no-wasm-lazy-compilation`), each in a fresh node process. Prints a
// markdown table and the ratios project ÷ minimal.
//
// Usage: node bench/startup.mjs [rounds=5]   (node 22: ~/.cache/stepwise/tools/node-22.23.3/bin)
// Builds first when needed: the project's Worker with scripts/build-worker.sh (skips itself when
// up to date), the minimal one with worker-build and the same pinned tools and wasm-opt pass.
// Bounded: every start waits at most 60 s for its answer, every stop 10 s before SIGKILL, the
// whole run ROUNDS × 5 min; children are killed on exit. Loopback only (127.0.0.1).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";

const ROOT = new URL("../", import.meta.url).pathname;
const MINIMAL = join(ROOT, "bench/minimal-worker");
const ROUNDS = Number(process.argv[2] ?? 5);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 50) throw new Error("rounds: an integer from 1 to 50");
const START_LIMIT_MS = 60_000;
const STOP_LIMIT_MS = 10_000;
const POLL_MS = 10;
const TOOLS = process.env.STEPWISE_CACHE ? join(process.env.STEPWISE_CACHE, "tools") : join(process.env.HOME, ".cache/stepwise/tools");
const versions = Object.fromEntries(
  [...readFileSync(join(ROOT, "scripts/versions.sh"), "utf8").matchAll(/^(\w+_VERSION)=(\S+)/gm)].map(([, k, v]) => [k, v]),
);
const WASM_BINDGEN_BIN = join(TOOLS, `wasm-bindgen-${versions.WASM_BINDGEN_VERSION}`, "bin/wasm-bindgen");
const WORKER_BUILD_BIN = join(TOOLS, `worker-build-${versions.WORKER_BUILD_VERSION}`, "bin/worker-build");
const WASM_OPT_BIN = join(TOOLS, `binaryen-${versions.BINARYEN_VERSION}`, "node_modules/.bin/wasm-opt");
const NODE_BIN_DIR = join(TOOLS, `node-${versions.NODE_VERSION}`, "bin");
const WRANGLER_JS = join(ROOT, "node_modules/wrangler/bin/wrangler.js");
/** The wasm-opt pass scripts/build-worker.sh runs after worker-build (size first, no names). */
const WASM_OPT_ARGS = ["-Oz", "--strip-debug", "--strip-producers", "--enable-mutable-globals", "--enable-sign-ext",
  "--enable-nontrapping-float-to-int", "--enable-bulk-memory", "--enable-multivalue", "--enable-reference-types",
  "--enable-exception-handling"];

// ---- children: tracked, killed on any exit -------------------------------------------------------
const children = new Set(); // pids of detached process groups
const miniflares = new Set();
function killAll() {
  for (const pid of children) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
  }
  children.clear();
}
process.on("exit", killAll);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, async () => {
    killAll();
    await Promise.allSettled([...miniflares].map((mf) => mf.dispose()));
    process.exit(130);
  });
}
const watchdog = setTimeout(() => {
  console.error(`startup bench: over its ${ROUNDS * 5} min limit, stopping`);
  killAll();
  process.exit(1);
}, ROUNDS * 5 * 60_000);
watchdog.unref();

const runEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };
delete runEnv.CLOUDFLARE_API_TOKEN;
delete runEnv.CLOUDFLARE_ACCOUNT_ID;

// ---- builds --------------------------------------------------------------------------------------
function run(cmd, args, options) {
  const result = spawnSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], timeout: 30 * 60_000, ...options });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${result.status ?? result.signal ?? result.error})`);
}

/** Files under `paths` (recursively) newer than `than` (ms since epoch). */
function newer(paths, than) {
  return paths.some((path) => {
    if (!existsSync(path)) return false;
    const stat = statSync(path);
    if (stat.isDirectory()) return newer(readdirSync(path).map((name) => join(path, name)), than);
    return stat.mtimeMs > than;
  });
}

function buildProject() {
  console.error("building the project's Worker (scripts/build-worker.sh)");
  run(join(ROOT, "scripts/build-worker.sh"), [], { cwd: ROOT });
}

/** The minimal Worker: worker-build --release with the pinned tools (as scripts/build-worker.sh
 * points it at them, so nothing downloads), then the same wasm-opt pass. */
function buildMinimal() {
  const wasm = join(MINIMAL, "build/index_bg.wasm");
  // Written after the wasm-opt pass: a build that stopped before it is stale.
  const stamp = join(MINIMAL, "build/.optimized");
  const built = existsSync(stamp) && existsSync(join(MINIMAL, "build/index.js")) ? statSync(stamp).mtimeMs : 0;
  const sources = ["src", "Cargo.toml", "Cargo.lock", "wrangler.toml"].map((p) => join(MINIMAL, p));
  if (built && !newer(sources, built)) {
    console.error("  minimal worker build is up to date");
    return;
  }
  console.error("building the minimal Worker (bench/minimal-worker, worker-build --release)");
  const env = {
    ...process.env,
    WASM_BINDGEN_BIN,
    WASM_OPT_BIN,
    ESBUILD_BIN: join(ROOT, "node_modules/.bin/esbuild"),
    PATH: `${NODE_BIN_DIR}:${process.env.PATH}`,
  };
  run(WORKER_BUILD_BIN, ["--release"], { cwd: MINIMAL, env });
  run(WASM_OPT_BIN, [...WASM_OPT_ARGS, wasm, "-o", wasm], { cwd: MINIMAL, env });
  writeFileSync(stamp, "");
}

/** Bundle size as scripts/build-worker.sh counts it: gzip -9 of index.js and every .wasm. */
function bundleGzip(buildDir) {
  let total = 0;
  for (const file of readdirSync(buildDir)) {
    if (file === "index.js" || file.endsWith(".wasm")) total += execFileSync("gzip", ["-9", "-n", "-c", join(buildDir, file)]).length;
  }
  return total;
}

// ---- configs -------------------------------------------------------------------------------------
const projectToml = parseToml(readFileSync(join(ROOT, "wrangler.toml"), "utf8"));
const minimalToml = parseToml(readFileSync(join(MINIMAL, "wrangler.toml"), "utf8"));
if (minimalToml.compatibility_date !== projectToml.compatibility_date) {
  throw new Error(`bench/minimal-worker/wrangler.toml's compatibility_date ${minimalToml.compatibility_date} is not the project's ${projectToml.compatibility_date}`);
}
const scratch = mkdtempSync(join(tmpdir(), "stepwise-startup-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

/** The project's config as the e2e harness runs it: a copy without its `build` entry (so wrangler
 * runs the build as it is), written beside wrangler.toml and removed on exit. The static assets
 * stay (an empty directory stands in for www/dist when the app is not built). */
function projectConfig() {
  const config = structuredClone(projectToml);
  delete config.build;
  let assetsNote = "www/dist";
  if (config.assets && !existsSync(join(ROOT, config.assets.directory))) {
    const empty = join(scratch, "assets");
    mkdirSync(empty, { recursive: true });
    config.assets.directory = empty;
    assetsNote = "an empty directory (www/dist not built)";
  }
  const file = join(ROOT, `.wrangler-e2e-startup-${process.pid}.toml`);
  writeFileSync(file, stringifyToml(config));
  process.on("exit", () => rmSync(file, { force: true }));
  return { file, assetsNote };
}

// ---- measurements --------------------------------------------------------------------------------
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** ms from `t0` until `GET <base>/healthz` answers 200, polling every 10 ms; `alive()` false ends it. */
async function untilHealthy(base, t0, alive) {
  const deadline = t0 + START_LIMIT_MS;
  const seen = [];
  for (;;) {
    if (!alive()) throw new Error("exited before answering");
    const left = deadline - performance.now();
    if (left <= 0) throw new Error(`no 200 from ${base}/healthz within ${START_LIMIT_MS} ms; answers: ${seen.slice(-5).join(", ")}`);
    const sent = performance.now() - t0;
    let outcome;
    try {
      const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(Math.max(1, Math.ceil(left))) });
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - t0;
      outcome = response.status;
    } catch (error) {
      outcome = error.cause?.code ?? error.name;
    }
    if (seen.at(-1)?.endsWith(` ${outcome}`) !== true) seen.push(`${Math.round(sent)}–${Math.round(performance.now() - t0)} ms ${outcome}`);
    await sleep(POLL_MS);
  }
}

/** `wrangler dev --local` on `config` (cwd `cwd`): ms from spawn to the first 200 of /healthz. */
async function wranglerStartup(config, cwd) {
  const port = await freePort();
  const persist = mkdtempSync(join(scratch, "state-"));
  const args = [WRANGLER_JS, "dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persist,
    "--config", config, "--show-interactive-dev-session=false"];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd, env: runEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child.pid);
  let log = "";
  child.stdout.on("data", (d) => (log = (log + d).slice(-4000)));
  child.stderr.on("data", (d) => (log = (log + d).slice(-4000)));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const alive = () => child.exitCode === null && child.signalCode === null;
  try {
    return await untilHealthy(`http://127.0.0.1:${port}`, t0, alive);
  } catch (error) {
    throw new Error(`wrangler dev (${config}): ${error.message}\n${log}`);
  } finally {
    if (alive()) {
      try {
        process.kill(-child.pid, "SIGINT");
      } catch {}
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      }, STOP_LIMIT_MS);
      await exited;
      clearTimeout(timer);
    }
    // Whatever wrangler left in its group (workerd) goes too.
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
    children.delete(child.pid);
    rmSync(persist, { recursive: true, force: true });
  }
}

/** The Miniflare wrangler bundles, driven as tests/e2e/harness.mjs drives it (its miniflare
 * path): the built Worker's modules with the bindings wrangler reads from `config`. */
const wranglerRequire = createRequire(join(ROOT, "node_modules/wrangler/package.json"));
const wranglerApi = wranglerRequire("wrangler");
const miniflareApi = wranglerRequire("miniflare");
function miniflareOptions(config, persist) {
  const { workerOptions, main } = wranglerApi.unstable_getMiniflareWorkerOptions(config);
  delete workerOptions.modulesRules;
  const root = dirname(main);
  const typeOf = (file) => (file.endsWith(".wasm") ? "CompiledWasm" : /\.m?js$/.test(file) ? "ESModule" : null);
  const modules = [{ type: "ESModule", path: main }];
  for (const file of readdirSync(root)) {
    const path = join(root, file);
    if (path !== main && typeOf(file)) modules.push({ type: typeOf(file), path });
  }
  const name = wranglerApi.unstable_readConfig({ config }).name;
  return miniflareApi.convertV4MiniflareOptions({
    host: "127.0.0.1",
    port: 0,
    cf: false,
    logRequests: false,
    log: new miniflareApi.Log(miniflareApi.LogLevel.WARN),
    resourcePersistencePath: persist,
    workers: [{ name, ...workerOptions, modules, modulesRoot: root }],
  });
}

/** Miniflare (workerd without wrangler's dev proxy): ms from `new Miniflare` to the first 200. */
async function miniflareStartup(config) {
  const persist = mkdtempSync(join(scratch, "mf-"));
  const options = miniflareOptions(config, persist); // read before the clock starts
  const t0 = performance.now();
  const mf = new miniflareApi.Miniflare(options);
  miniflares.add(mf);
  try {
    const url = await Promise.race([mf.ready, sleep(START_LIMIT_MS).then(() => Promise.reject(new Error("miniflare not ready in 60 s")))]);
    return await untilHealthy(url.origin, t0, () => true);
  } finally {
    await Promise.race([mf.dispose(), sleep(STOP_LIMIT_MS)]);
    miniflares.delete(mf);
    rmSync(persist, { recursive: true, force: true });
  }
}

/** `WebAssembly.compile` of `wasm` in a fresh node process (no module cache), ms. */
const COMPILE = "const b=require('fs').readFileSync(process.argv[1]);const t=performance.now();" +
  "WebAssembly.compile(b).then(()=>console.log(performance.now()-t))";
function compileMs(wasm, flags) {
  const out = execFileSync(process.execPath, [...flags, "-e", COMPILE, wasm], { timeout: 120_000, encoding: "utf8" });
  return Number(out.trim());
}
const EAGER = ["--no-liftoff", "--no-wasm-lazy-compilation"];

// ---- the run -------------------------------------------------------------------------------------
buildProject();
buildMinimal();
const project = projectConfig();
const workers = [
  { name: "Stepwise Worker (`worker/`)", key: "project", config: project.file, cwd: ROOT, build: join(ROOT, "worker/build") },
  { name: "minimal workers-rs Worker (`bench/minimal-worker/`)", key: "minimal", config: join(MINIMAL, "wrangler.toml"), cwd: MINIMAL, build: join(MINIMAL, "build") },
];
for (const w of workers) {
  w.gzip = bundleGzip(w.build);
  w.wasm = join(w.build, "index_bg.wasm");
  w.wasmRaw = statSync(w.wasm).size;
  w.wrangler = [];
  w.miniflare = [];
  w.lazy = [];
  w.eager = [];
}
let miniflareWorks = true;
console.error(`${ROUNDS} rounds, alternating; project assets: ${project.assetsNote}`);
for (let round = 0; round < ROUNDS; round++) {
  // Alternate which goes first, so neither always runs on the warmer machine.
  const order = round % 2 === 0 ? workers : [...workers].reverse();
  for (const w of order) w.wrangler.push(await wranglerStartup(w.config, w.cwd));
  if (miniflareWorks) {
    for (const w of order) {
      try {
        w.miniflare.push(await miniflareStartup(w.config));
      } catch (error) {
        console.error(`miniflare path failed, skipped from now on: ${error.message.slice(0, 500)}`);
        miniflareWorks = false;
        break;
      }
    }
  }
  for (const w of order) {
    w.lazy.push(compileMs(w.wasm, []));
    w.eager.push(compileMs(w.wasm, EAGER));
  }
  const f = (xs) => xs.at(-1)?.toFixed(0) ?? "—";
  console.error(`round ${round + 1}: ` + order.map((w) => `${w.key} wrangler ${f(w.wrangler)} ms, miniflare ${f(w.miniflare)} ms, ` +
    `compile ${w.lazy.at(-1).toFixed(1)} / ${w.eager.at(-1).toFixed(0)} ms`).join("; "));
}

const median = (xs) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const min = (xs) => (xs.length ? Math.min(...xs) : NaN);
const ms = (x, digits = 0) => (Number.isNaN(x) ? "—" : `${x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })} ms`);
const ratio = (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? "—" : `${(a / b).toFixed(2)}x`);
const cells = (w) => [
  `${w.gzip.toLocaleString("en-US")} B`,
  `${ms(median(w.wrangler))} / ${ms(min(w.wrangler))}`,
  `${ms(median(w.miniflare))} / ${ms(min(w.miniflare))}`,
  ms(median(w.lazy), 1),
  ms(median(w.eager)),
];
const [p, m] = workers;
const version = (name) => JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
console.log(`\nStartup, ${ROUNDS} rounds alternating (node ${process.version}, wrangler ${version("wrangler")}, workerd ${version("workerd")}; startup = spawn to the first 200 of GET /healthz, median / min; compile = WebAssembly.compile in a fresh node, median):\n`);
console.log("| Worker | bundle (gzip) | `wrangler dev` startup, median / min | Miniflare startup, median / min | compile, lazy | compile, eager |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const w of workers) console.log(`| ${w.name} | ${cells(w).join(" | ")} |`);
console.log(`| project ÷ minimal | ${(p.gzip / m.gzip).toFixed(2)}x | ${ratio(median(p.wrangler), median(m.wrangler))} / ${ratio(min(p.wrangler), min(m.wrangler))} | ` +
  `${ratio(median(p.miniflare), median(m.miniflare))} / ${ratio(min(p.miniflare), min(m.miniflare))} | ${ratio(median(p.lazy), median(m.lazy))} | ${ratio(median(p.eager), median(m.eager))} |`);
console.log(`\nwasm raw: project ${p.wasmRaw.toLocaleString("en-US")} B, minimal ${m.wasmRaw.toLocaleString("en-US")} B. Project assets: ${project.assetsNote}. Budget: bundle ≤ 1 MiB gzip (1,048,576 B).`);
console.log("raw (ms): " + JSON.stringify(Object.fromEntries(workers.map((w) => [w.key, {
  wrangler: w.wrangler.map(Math.round), miniflare: w.miniflare.map(Math.round), lazy: w.lazy.map((x) => +x.toFixed(1)), eager: w.eager.map(Math.round),
}]))));
process.exit(0);

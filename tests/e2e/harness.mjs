// Starts the stack for end-to-end tests: the fake provider and `wrangler dev` (workerd, local KV)
// on free loopback ports, configured with three fake providers; stops both cleanly.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { startFakeProvider } from "./fake-provider.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
/** The secret the Worker holds; it must never come back in a response, an event or a log line. */
export const SECRET_KEY = "sk-test-9f8e7d6c5b4a39281706";
export const ADMIN_TOKEN = "admin-test-token-0123456789abcdef";
export const TIMEOUT_MS = 1500;
/** The owner token of the suites' main user (an anonymous owner: 32 lowercase hex digits). */
export const OWNER = "0123456789abcdef0123456789abcdef";

/** A fresh anonymous owner token, as the browser app makes one. */
export function newOwner() {
  return randomBytes(16).toString("hex");
}

/** The owner id the server keys an anonymous owner's data by: hex SHA-256 of `token:<token>`. */
export function ownerId(token = OWNER) {
  return createHash("sha256").update(`token:${token}`).digest("hex");
}

/** The `Authorization` header of an owner token. */
export function asOwner(token = OWNER) {
  return { authorization: `Bearer ${token}` };
}

/**
 * A caller of the Worker's JSON API: `call(method, path, {body, raw, headers, owner})` sends
 * `body` as JSON (or `raw` as is) as `owner` (the main owner when not given) and answers
 * `{status, headers, text, json}` (`json` null when the body is not JSON). `base()` gives the
 * stack's address; every body is pushed to `seen` when given (suites check none holds the key).
 */
export function apiCaller(base, seen) {
  return async function call(method, path, { body, raw, headers = {}, owner } = {}) {
    const response = await fetch(base() + path, {
      method,
      headers: { "content-type": "application/json", ...asOwner(owner), ...headers },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await response.text();
    seen?.push(text);
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: response.status, headers: response.headers, text, json };
  };
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts the fake provider and the Worker under `wrangler dev` (as the run command does; the
 * one workerd of the repository, at wrangler.toml's compatibility date).
 */
export async function startStack(options = {}) {
  // One retry: the free port found may be taken before wrangler binds it.
  try {
    return await startOnce(options);
  } catch (error) {
    console.error(`stack start failed, retrying once: ${error.message.slice(0, 300)}`);
    return startOnce(options);
  }
}

/** A provider entry of `LLM_PROVIDERS` pointing at the fake server. */
export function fakeProvider(fakeUrl, name, kind, model = "fake-model") {
  const base_url = kind === "gemini" ? `${fakeUrl}/gemini/v1beta` : `${fakeUrl}/${kind}/v1`;
  return { name, kind, base_url, model, api_key_secret: "FAKE_KEY" };
}

/** wrangler.toml as an object, read with a TOML parser. */
export function wranglerConfig() {
  return parseToml(readFileSync(join(ROOT, "wrangler.toml"), "utf8"));
}

/** Rate limits high enough for functional suites, which make hundreds of calls as one owner
 * (the security suite sets its own). */
export function generousLimits(config) {
  for (const limit of config.ratelimits) limit.simple.limit = 100000;
  return config;
}

/** Builds the Worker and the app once per test process (each part skips itself when up to
 * date); stacks then run that build as it is: their config has no `build` entry, so wrangler
 * neither rebuilds on start nor reloads when a source file changes during a run. */
let built = false;
function buildOnce() {
  if (built) return;
  const result = spawnSync(join(ROOT, "scripts/build.sh"), { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) throw new Error(`scripts/build.sh failed (${result.status})`);
  built = true;
}

/** Local state with the D1 migrations (schema and starter knowledge base) applied, made once per
 * test process; each stack starts from a copy of it, as `scripts/dev.sh` starts from its own. */
let migratedState = null;
function migratedTemplate(env) {
  if (migratedState) return migratedState;
  const dir = mkdtempSync(join(tmpdir(), "stepwise-d1-"));
  const args = ["--no-install", "wrangler", "d1", "migrations", "apply", "stepwise-help", "--local", "--persist-to", dir];
  const result = spawnSync("npx", args, { cwd: ROOT, env, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`D1 migrations failed:\n${result.stdout}\n${result.stderr}`);
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  migratedState = dir;
  return dir;
}

/** `overrides`: vars (or a function of the fake provider's URL returning them).
 * `runtime`: `"wrangler"` (default: `wrangler dev`, as the run command does) or `"miniflare"`
 * (the Miniflare wrangler bundles, driven directly with the same config and state: workerd
 * without wrangler's dev proxy in front, for benchmarks); `inspectorPort` opens workerd's
 * inspector on that loopback port (miniflare only; `stack.inspector` is its address) and
 * `workerDir` runs another build of the Worker (miniflare only; benchmarks' names-keeping one).
 * `providers(fakeUrl)` replaces the default list: fake-openai, fake-anthropic, fake-gemini, offline.
 * `config(object)` edits wrangler.toml's object for this stack only (bindings such as rate
 * limits can only be set there; by default the limits are raised with `generousLimits`); the
 * edited copy, without its `build` entry, is written beside it as TOML and removed when the stack
 * stops. */
async function startOnce({ overrides = {}, providers: listProviders, config = generousLimits, runtime = "wrangler", inspectorPort, workerDir, persist } = {}) {
  buildOnce();
  const fake = await startFakeProvider();
  const port = await freePort();
  // `persist`: a state directory kept when the stack stops, so a second stack can start on what
  // the first left (a restart); made (with the D1 migrations) on first use.
  const state = persist ?? mkdtempSync(join(tmpdir(), "stepwise-e2e-"));
  const dropState = () => persist || rmSync(state, { recursive: true, force: true });
  const providers = listProviders
    ? listProviders(fake.url)
    : [...["openai", "anthropic", "gemini"].map((kind) => fakeProvider(fake.url, `fake-${kind}`, kind)), { name: "offline", kind: "offline" }];
  const vars = {
    LLM_PROVIDERS: JSON.stringify(providers),
    LLM_PROVIDER: "fake-openai",
    FAKE_KEY: SECRET_KEY,
    ADMIN_TOKEN,
    LLM_TIMEOUT_MS: String(TIMEOUT_MS),
    ALLOWED_ORIGINS: "http://allowed.example",
    MODEL_CALLS_PER_OWNER_PER_DAY: "1000000",
    MODEL_CALLS_PER_DAY: "1000000",
    MODEL_CALLS_PER_ADDRESS_PER_DAY: "1000000",
    MODEL_CALLS_NEW_OWNERS_PER_DAY: "1000000",
    HELP_HANDOFFS_PER_OWNER_PER_DAY: "1000000",
    HELP_HANDOFFS_PER_ADDRESS_PER_DAY: "1000000",
    PUBMED_BASE_URL: `${fake.url}/eutils`,
    ...(typeof overrides === "function" ? overrides(fake.url) : overrides),
  };
  const args = ["--no-install", "wrangler", "dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, "--show-interactive-dev-session=false"];
  const baseConfig = wranglerConfig();
  delete baseConfig.build;
  const configFile = join(ROOT, `.wrangler-e2e-${port}.toml`);
  writeFileSync(configFile, stringifyToml(config ? config(baseConfig) : baseConfig));
  args.push("--config", configFile);
  const removeConfig = () => rmSync(configFile, { force: true });
  for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };
  delete env.CLOUDFLARE_API_TOKEN;
  delete env.CLOUDFLARE_ACCOUNT_ID;
  if (!persist || !existsSync(join(state, "v3"))) cpSync(migratedTemplate(env), state, { recursive: true });
  if (runtime === "miniflare") {
    try {
      const { mf, url, inspector } = await startMiniflare(configFile, vars, join(state, "v3"), inspectorPort, workerDir);
      const base = url.origin;
      return {
        base,
        fake,
        inspector,
        log: () => "",
        async stop() {
          await mf.dispose();
          await fake.close();
          dropState();
          removeConfig();
        },
      };
    } catch (error) {
      await fake.close();
      dropState();
      removeConfig();
      throw error;
    }
  }
  const wrangler = spawn("npx", args, { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  wrangler.stdout.on("data", (d) => (log += d));
  wrangler.stderr.on("data", (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  const exited = new Promise((resolve) => wrangler.once("exit", resolve));
  const kill = async () => {
    if (wrangler.exitCode === null && wrangler.signalCode === null) {
      try {
        process.kill(-wrangler.pid, "SIGINT");
      } catch {}
      const timer = setTimeout(() => {
        try {
          process.kill(-wrangler.pid, "SIGKILL");
        } catch {}
      }, 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  const deadline = Date.now() + 120_000;
  try {
    for (;;) {
      if (wrangler.exitCode !== null) throw new Error(`wrangler exited early:\n${log}`);
      try {
        if ((await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) })).ok) break;
      } catch {}
      if (Date.now() > deadline) throw new Error(`wrangler did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (error) {
    await kill();
    await fake.close();
    dropState();
    removeConfig();
    throw error;
  }
  return {
    base,
    fake,
    log: () => log,
    async stop() {
      await kill();
      await fake.close();
      dropState();
      removeConfig();
    },
  };
}

/** The Miniflare wrangler bundles (miniflare 5), resolved through wrangler itself. */
function wranglerModules() {
  const require = createRequire(join(ROOT, "node_modules", "wrangler", "package.json"));
  return { wrangler: require("wrangler"), miniflare: require("miniflare") };
}

/** Starts the built Worker on Miniflare with the bindings of `configFile` (read by wrangler, so
 * they are the ones `wrangler dev` gives), `vars` over its vars, state under `persist`. */
async function startMiniflare(configFile, vars, persist, inspectorPort, workerDir) {
  const { wrangler, miniflare } = wranglerModules();
  const { workerOptions, main: built } = wrangler.unstable_getMiniflareWorkerOptions(configFile);
  const main = workerDir ? join(workerDir, "index.js") : built;
  // Miniflare 5 reads wrangler's (v4-shaped) options through its converter, which refuses module
  // rules: the modules are listed instead (the entry first), as wrangler's build left them.
  delete workerOptions.modulesRules;
  const root = dirname(main);
  const typeOf = (file) => (file.endsWith(".wasm") ? "CompiledWasm" : /\.m?js$/.test(file) ? "ESModule" : null);
  const modules = [{ type: "ESModule", path: main }];
  for (const file of readdirSync(root)) {
    const path = join(root, file);
    if (path !== main && typeOf(file)) modules.push({ type: typeOf(file), path });
  }
  const name = wrangler.unstable_readConfig({ config: configFile }).name;
  const options = miniflare.convertV4MiniflareOptions({
    host: "127.0.0.1",
    port: 0,
    cf: false,
    logRequests: false,
    log: new miniflare.Log(miniflare.LogLevel.WARN),
    resourcePersistencePath: persist,
    ...(inspectorPort === undefined ? {} : { inspectorPort, inspectorHost: "127.0.0.1" }),
    workers: [{ name, ...workerOptions, modules, modulesRoot: root, bindings: { ...workerOptions.bindings, ...vars } }],
  });
  const mf = new miniflare.Miniflare(options);
  const url = await mf.ready;
  const inspector = inspectorPort === undefined ? null : `ws://127.0.0.1:${inspectorPort}/core:user:${name}`;
  return { mf, url, inspector };
}

/** Parses an SSE body into events `{id, event, data}` (data parsed as JSON). */
export function parseSse(text) {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim())
    .map((block) => {
      const fields = { data: [] };
      for (const line of block.split(/\r?\n/)) {
        const [name, ...rest] = line.split(":");
        const value = rest.join(":").replace(/^ /, "");
        if (name === "data") fields.data.push(value);
        else fields[name] = value;
      }
      return { id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data.join("\n")) };
    });
}

/** Reads an event stream as it arrives: `events` fills as they come, `done` is all of them. */
export function readEvents(response) {
  const events = [];
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let buffer = "";
  const done = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true }));
      if (chunk.done) return events;
      buffer += decoder.decode(chunk.value, { stream: true });
      for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n")) {
        events.push(...parseSse(buffer.slice(0, at + 2)));
        buffer = buffer.slice(at + 2);
      }
    }
  })();
  return { events, done, text: () => shownText(events) };
}

/** The display text of a stream's events. */
export const shownText = (events) => events.filter((e) => e.event === "text_delta").map((e) => e.data.text).join("");

/** `found()`'s first truthy value, asked every 50 ms for at most `ms`. */
export async function until(found, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await found();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

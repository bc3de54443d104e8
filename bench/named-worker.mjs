// The Worker build the CPU benchmarks run: the shipped Worker's JS, with its wasm optimized the
// same way (wasm-opt -Oz) but keeping function names, so that a CPU profile names the Rust code.
import { copyFileSync, existsSync, mkdtempSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

/** Writes the named build into a fresh temporary directory and returns it (the caller removes it). */
export function namedBuild() {
  const names = process.env.WORKER_NAMES_DIR ?? join(ROOT, "target/worker-names");
  if (!existsSync(join(names, "index_bg.wasm"))) {
    throw new Error("target/worker-names is missing: rebuild the Worker (touch worker/src/lib.rs && scripts/build-worker.sh)");
  }
  const dir = mkdtempSync(join(tmpdir(), "stepwise-named-"));
  copyFileSync(join(names, "index.js"), join(dir, "index.js"));
  const wasmOpt = join(process.env.HOME, ".cache/stepwise/tools/binaryen-132.0.0/node_modules/.bin/wasm-opt");
  execFileSync(wasmOpt, ["-Oz", "--debuginfo", "--strip-producers", "--enable-mutable-globals", "--enable-sign-ext", "--enable-nontrapping-float-to-int",
    "--enable-bulk-memory", "--enable-multivalue", "--enable-reference-types", "--enable-exception-handling",
    join(names, "index_bg.wasm"), "-o", join(dir, "index_bg.wasm")]);
  return dir;
}

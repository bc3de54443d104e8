#!/usr/bin/env bash
#! Builds the Worker (worker/build) offline with worker-build, pointing it at the pinned
#! wasm-bindgen, wasm-opt (npm binaryen) and esbuild (npm) so it downloads nothing, then prints
#! the bundle's raw and gzip sizes. wrangler.toml runs it as the build command.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/versions.sh"
"$root/scripts/setup.sh" worker >&2
export WASM_BINDGEN_BIN="$WASM_BINDGEN_DIR/bin/wasm-bindgen"
export WASM_OPT_BIN="$BINARYEN_DIR/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$root/node_modules/.bin/esbuild"
export PATH="$NODE_DIR/bin:$PATH"
cd "$root/worker"
# wrangler runs this on every start: rebuild only when a source is newer than the build.
stale="$(find src Cargo.toml ../Cargo.toml ../wrangler.toml ../rust-toolchain.toml ../crates/core/src ../crates/core/Cargo.toml ../Cargo.lock -newer build/index_bg.wasm 2>/dev/null | head -1 || true)"
if [ -f build/index_bg.wasm ] && [ -f build/index.js ] && [ -z "$stale" ]; then
  echo "  worker build is up to date" >&2
else
  "$WORKER_BUILD_DIR/bin/worker-build" --release >&2
  # The build before the size pass, kept (outside the bundle) for CPU profiles that show
  # function names: bench/worker-profile.mjs optimizes a copy the same way but keeps names.
  mkdir -p ../target/worker-names && cp build/index_bg.wasm build/index.js ../target/worker-names/
  # Size first and no names section (worker-build's own pass keeps names; it is off in
  # worker/Cargo.toml). The features are rustc's wasm32 defaults plus exception handling,
  # the set worker-build itself enables, all of which workerd supports.
  "$WASM_OPT_BIN" -Oz --strip-debug --strip-producers --enable-mutable-globals --enable-sign-ext \
    --enable-nontrapping-float-to-int --enable-bulk-memory --enable-multivalue \
    --enable-reference-types --enable-exception-handling build/index_bg.wasm -o build/index_bg.wasm
fi
size() { wc -c <"$1" | tr -d ' '; }
gz() { gzip -9 -n -c "$1" | wc -c | tr -d ' '; }
total_raw=0; total_gz=0
for file in build/index.js build/*.wasm; do
  [ -f "$file" ] || continue
  printf '  %-28s %8d B raw %8d B gzip\n' "$file" "$(size "$file")" "$(gz "$file")" >&2
  total_raw=$((total_raw + $(size "$file"))); total_gz=$((total_gz + $(gz "$file")))
done
printf '  Worker bundle total %d B raw, %d B gzip (budget 1048576 B gzip: 1 MiB)\n' "$total_raw" "$total_gz" >&2

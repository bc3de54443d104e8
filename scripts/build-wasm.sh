#!/usr/bin/env bash
#! Builds the browser package crates/wasm/pkg offline and reproducibly:
#! cargo (wasm32) -> wasm-bindgen --target web -> wasm-opt -O3 (smaller here than -Oz --converge, measured); the JS entry (crates/wasm/js)
#! and the glue bundled and minified by esbuild (npm, offline; stepwise.d.ts keeps the
#! documented API), then prints raw and gzip sizes.
#! Usage: scripts/build-wasm.sh [--features LIST --out DIR]   (a variant build for a benchmark,
#! or a copy built elsewhere; the package itself is crates/wasm/pkg)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/versions.sh"
"$root/scripts/setup.sh" wasm >/dev/null
cd "$root"
export PATH="$NODE_DIR/bin:$PATH"
out="crates/wasm/pkg"
features=()
while [ $# -gt 0 ]; do
  case "$1" in
    --features) features=(--features "$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
lock_version="$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')"
if [ "$lock_version" != "$WASM_BINDGEN_VERSION" ]; then
  echo "Cargo.lock has wasm-bindgen $lock_version but scripts/versions.sh pins $WASM_BINDGEN_VERSION" >&2; exit 1
fi

target_dir="target"
# A variant builds into its own target directory, so the package's own build stays cached.
[ ${#features[@]} -gt 0 ] && target_dir="target/wasm-variant"
cargo build -p stepwise-wasm --target wasm32-unknown-unknown --profile wasm-release --locked \
  --target-dir "$target_dir" ${features[@]+"${features[@]}"}
rm -rf "$out" && mkdir -p "$out"
"$WASM_BINDGEN_DIR/bin/wasm-bindgen" --target web --out-dir "$out" --out-name stepwise \
  "$target_dir/wasm32-unknown-unknown/wasm-release/stepwise_wasm.wasm"
# The entry (crates/wasm/js/stepwise.js) defines MarkerStream.feed around the bindings; both are
# bundled into one minified stepwise.js.
mv "$out/stepwise.js" "$out/bindings.js"
cp crates/wasm/js/stepwise.js "$out/entry.js"
node_modules/.bin/esbuild "$out/entry.js" --bundle --minify --format=esm --target=es2022 \
  --outfile="$out/stepwise.js" --log-level=warning --log-override:duplicate-object-key=silent
rm -rf "$out/entry.js" "$out/bindings.js" "$out/snippets"
node "$BINARYEN_DIR/node_modules/binaryen/bin/wasm-opt" -O3 --strip-debug --strip-producers --enable-bulk-memory --enable-sign-ext \
  --enable-mutable-globals --enable-nontrapping-float-to-int \
  "$out/stepwise_bg.wasm" -o "$out/stepwise_bg.wasm"
# Node has no `fetch` of file URLs for `init()`: its entry reads the wasm file and initializes
# synchronously on import (the "node" condition of the exports map).
cp crates/wasm/js/stepwise.node.js crates/wasm/js/README.md LICENSE-MIT LICENSE-APACHE "$out/"
# The public types: wasm-bindgen's InitOutput lists every raw export of the module; only its
# memory is the caller's business.
node -e '
const fs = require("fs"), file = process.argv[1];
const text = fs.readFileSync(file, "utf8");
const trimmed = text.replace(/export interface InitOutput \{[\s\S]*?\n\}/, "export interface InitOutput {\n    readonly memory: WebAssembly.Memory;\n}");
if (trimmed === text) throw new Error("InitOutput not found in " + file);
fs.writeFileSync(file, trimmed);
' "$out/stepwise.d.ts"
# The wire types (written from stepwise-core's Rust types by `cargo run -p stepwise-contract`).
cat crates/wasm/js/wire.d.ts >> "$out/stepwise.d.ts"
rm -f "$out/stepwise_bg.wasm.d.ts" "$out/.gitignore"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' crates/wasm/Cargo.toml | head -1)"
cat > "$out/package.json" <<JSON
{
  "name": "@stepwise-dev/core",
  "version": "$version",
  "description": "Stepwise core in WebAssembly: validate actions, infer workflow steps, parse markers in streamed LLM output.",
  "license": "MIT OR Apache-2.0",
  "repository": { "type": "git", "url": "git+https://github.com/stepwise-dev/stepwise.git", "directory": "crates/wasm" },
  "keywords": ["llm", "chat", "workflow", "streaming", "parser", "wasm"],
  "type": "module",
  "main": "./stepwise.js",
  "types": "./stepwise.d.ts",
  "exports": {
    ".": {
      "types": "./stepwise.d.ts",
      "node": "./stepwise.node.js",
      "default": "./stepwise.js"
    },
    "./stepwise_bg.wasm": "./stepwise_bg.wasm",
    "./package.json": "./package.json"
  },
  "files": ["stepwise.js", "stepwise.node.js", "stepwise.d.ts", "stepwise_bg.wasm", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
  "engines": { "node": ">=18" },
  "sideEffects": ["./stepwise.node.js"]
}
JSON

size() { wc -c <"$1" | tr -d ' '; }
gz() { gzip -9 -n -c "$1" | wc -c | tr -d ' '; }
wasm_raw=$(size "$out/stepwise_bg.wasm"); wasm_gz=$(gz "$out/stepwise_bg.wasm")
js_raw=$(size "$out/stepwise.js"); js_gz=$(gz "$out/stepwise.js")
total_gz=$((wasm_gz + js_gz))
printf 'package %s\n' "$out"
printf '  stepwise_bg.wasm %8d B raw %8d B gzip\n' "$wasm_raw" "$wasm_gz"
printf '  stepwise.js      %8d B raw %8d B gzip\n' "$js_raw" "$js_gz"
printf '  total (wasm + JS glue) %d B gzip (budget 98304 B)\n' "$total_gz"
# A size report, not a test: the figure is printed and recorded in bench/README.md.
if [ "$total_gz" -gt 98304 ]; then echo "  OVER the 96 KB gzip budget by $((total_gz - 98304)) B"; fi

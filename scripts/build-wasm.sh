#!/usr/bin/env bash
#! Builds the browser package crates/wasm/pkg offline and reproducibly:
#! cargo (wasm32) -> wasm-bindgen --target web -> wasm-opt -Oz; the JS entry (crates/wasm/js)
#! and the glue bundled and minified by esbuild (npm, offline; stepwise.d.ts keeps the
#! documented API), then prints raw and gzip sizes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/versions.sh"
"$root/scripts/setup.sh" wasm >/dev/null
cd "$root"
export PATH="$NODE_DIR/bin:$PATH"
out="crates/wasm/pkg"
lock_version="$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')"
if [ "$lock_version" != "$WASM_BINDGEN_VERSION" ]; then
  echo "Cargo.lock has wasm-bindgen $lock_version but scripts/versions.sh pins $WASM_BINDGEN_VERSION" >&2; exit 1
fi

cargo build -p stepwise-wasm --target wasm32-unknown-unknown --profile wasm-release --locked
rm -rf "$out" && mkdir -p "$out"
"$WASM_BINDGEN_DIR/bin/wasm-bindgen" --target web --out-dir "$out" --out-name stepwise \
  target/wasm32-unknown-unknown/wasm-release/stepwise_wasm.wasm
# The entry (crates/wasm/js/stepwise.js) defines MarkerStream.feed around the bindings; both are
# bundled into one minified stepwise.js.
mv "$out/stepwise.js" "$out/bindings.js"
cp crates/wasm/js/stepwise.js "$out/entry.js"
node_modules/.bin/esbuild "$out/entry.js" --bundle --minify --format=esm --target=es2022 \
  --outfile="$out/stepwise.js" --log-level=warning --log-override:duplicate-object-key=silent
rm -r "$out/entry.js" "$out/bindings.js" "$out/snippets"
node "$BINARYEN_DIR/node_modules/binaryen/bin/wasm-opt" -Oz --converge --strip-debug --strip-producers --enable-bulk-memory --enable-sign-ext \
  --enable-mutable-globals --enable-nontrapping-float-to-int \
  "$out/stepwise_bg.wasm" -o "$out/stepwise_bg.wasm"
cat > "$out/package.json" <<JSON
{
  "name": "stepwise-wasm",
  "version": "0.0.0",
  "description": "Stepwise core in WebAssembly: validate actions, infer steps, parse markers.",
  "type": "module",
  "main": "stepwise.js",
  "types": "stepwise.d.ts",
  "files": ["stepwise.js", "stepwise.d.ts", "stepwise_bg.wasm", "stepwise_bg.wasm.d.ts"],
  "sideEffects": false
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
printf '  total (wasm + JS glue) %d B gzip (budget 65536 B)\n' "$total_gz"
# A size report, not a test: the figure is printed and recorded in the README.
if [ "$total_gz" -gt 65536 ]; then echo "  OVER the 64 KB gzip budget by $((total_gz - 65536)) B"; fi

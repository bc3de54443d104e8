#!/usr/bin/env bash
#! Builds the browser app into www/dist (served by the Worker as static assets): type-checks
#! www/src with tsc, bundles it with esbuild (npm, offline), copies the page, the styles and the
#! wasm package (scripts/build-wasm.sh) and the icons (www/favicon.svg, and www/favicon.ico, made
#! from it, for `/favicon.ico`), then prints raw and gzip sizes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/versions.sh"
cd "$root"
export PATH="$NODE_DIR/bin:$PATH"
pkg="crates/wasm/pkg"
stale="$(find crates/core/src crates/wasm/src crates/wasm/js -newer "$pkg/stepwise_bg.wasm" 2>/dev/null | head -1 || true)"
if [ ! -f "$pkg/stepwise_bg.wasm" ] || [ -n "$stale" ]; then
  "$root/scripts/build-wasm.sh" >&2
fi
out="www/dist"
newer="$(find www/src www/index.html www/style.css www/_headers www/favicon.svg www/favicon.ico www/tsconfig.json openapi.yaml "$pkg/stepwise_bg.wasm" -newer "$out/app.js" 2>/dev/null | head -1 || true)"
if [ -f "$out/app.js" ] && [ -z "$newer" ]; then
  echo "  browser app is up to date" >&2
  exit 0
fi
node_modules/.bin/tsc -p www/tsconfig.json
rm -rf "$out" && mkdir -p "$out/pkg"
node_modules/.bin/esbuild www/src/main.ts --bundle --format=esm --minify --target=es2022 \
  --outfile="$out/app.js" --log-level=warning --log-override:duplicate-object-key=silent
# The HTTP contract is served as a static file too (GET /openapi.yaml): no bytes in the Worker.
cp www/index.html www/style.css www/_headers www/favicon.svg www/favicon.ico openapi.yaml "$out/"
cp "$pkg/stepwise_bg.wasm" "$out/pkg/"
size() { wc -c <"$1" | tr -d ' '; }
gz() { gzip -9 -n -c "$1" | wc -c | tr -d ' '; }
total_raw=0; total_gz=0
for file in "$out/index.html" "$out/style.css" "$out/app.js" "$out/pkg/stepwise_bg.wasm"; do
  printf '  %-32s %8d B raw %8d B gzip\n' "$file" "$(size "$file")" "$(gz "$file")" >&2
  total_raw=$((total_raw + $(size "$file"))); total_gz=$((total_gz + $(gz "$file")))
done
printf '  browser app total %d B raw, %d B gzip (app code without the wasm: see app.js)\n' "$total_raw" "$total_gz" >&2

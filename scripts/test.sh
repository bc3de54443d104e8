#!/usr/bin/env bash
#! Sets up everything (idempotent) and runs every check of the project. This is the README's test command.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
. scripts/versions.sh
# Each step prints the time the previous one took (bench/README.md "Setup and test run times"
# has the measured totals of a cold and a warm run).
step_started=$SECONDS
step() {
  [ -n "${step_name:-}" ] && printf '== %s: %d s (total %d s)\n' "$step_name" $((SECONDS - step_started)) "$SECONDS"
  step_name="$*"; step_started=$SECONDS
  printf '\n== %s\n' "$*"
}

step "setup (pinned tools, cached under ${STEPWISE_CACHE})"
scripts/setup.sh all
export PATH="$NODE_DIR/bin:$WASM_BINDGEN_DIR/bin:$WASM_PACK_DIR/bin:$PATH"

step "tidy: ARCHITECTURE.md's code map against the tree, file headers, doc links; openapi.yaml against the router and the wire types"
node --test tests/tidy.test.mjs tests/contract.test.mjs

step "format"
cargo fmt --all -- --check

step "lint (native and wasm32)"
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy -p stepwise-wasm --target wasm32-unknown-unknown --all-targets --locked -- -D warnings
cargo clippy -p stepwise-worker --target wasm32-unknown-unknown --locked -- -D warnings

step "core: unit, vector, property and doc tests"
cargo test --workspace --locked

step "core builds for wasm32-unknown-unknown"
cargo build -p stepwise-core --target wasm32-unknown-unknown --release --locked

step "wasm suites through wasm-pack in headless Chromium and node (shared vectors)"
# wasm-pack finds the pinned wasm-bindgen(-test-runner) and Debian's chromedriver on PATH and
# downloads nothing; offline it warns that it cannot check its own version.
wasm-pack test --headless --chrome crates/wasm --locked
wasm-pack test --node crates/wasm --locked

step "browser package: build and size report"
scripts/build-wasm.sh

step "browser package: JS API tests, TypeScript declarations, npm pack and install"
node --test --test-timeout=300000 crates/wasm/js-tests/*.test.mjs
npx --no-install tsc -p crates/wasm/js-tests/tsconfig.json
(cd crates/wasm/pkg && npm pack --dry-run --loglevel=warn >/dev/null)

step "stepwise-core is publishable (cargo publish --dry-run)"
cargo publish --dry-run -p stepwise-core --locked --allow-dirty

step "Worker: build (worker-build, offline) and bundle size"
scripts/build-worker.sh

step "Browser app: tsc, esbuild bundle and size"
scripts/build-www.sh

step "Worker end to end: wrangler dev + fake provider (OpenAI, Anthropic, Gemini formats, faults)"
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
node --test --test-concurrency=1 --test-timeout=600000 tests/e2e/*.test.mjs

step "Browser end to end: playwright-core + /usr/bin/chromium against wrangler dev (screenshots in tests/browser/screenshots)"
node --test --test-concurrency=1 --test-timeout=600000 tests/browser/*.test.mjs

step "all checks passed"
printf '(%d s in all)\n' "$SECONDS"

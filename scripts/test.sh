#!/usr/bin/env bash
#! Sets up everything (idempotent) and runs every check of the project. This is the README's test command.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
step() { printf '\n== %s\n' "$*"; }

step "setup (pinned tools, cached under ~/.cache/stepwise)"
scripts/setup.sh core

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "tests (unit, vectors, properties, doctests)"
cargo test --workspace --locked

step "core builds for wasm32-unknown-unknown"
cargo build -p stepwise-core --target wasm32-unknown-unknown --release --locked

step "all checks passed"

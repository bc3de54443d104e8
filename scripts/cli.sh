#!/usr/bin/env bash
#! Runs the guided workflow in the terminal with the offline provider (no Worker needed).
#! Until the Worker exists (issue 4) it runs the guided workflow in the terminal with the
#! offline provider: real turns through the core, no network, no API key.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/setup.sh core >&2
exec cargo run --quiet --locked -p stepwise-core --example guided_cli

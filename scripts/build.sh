#!/usr/bin/env bash
#! wrangler's build command: the Worker (scripts/build-worker.sh) and the browser app it serves
#! as static assets (scripts/build-www.sh). Each part skips itself when up to date.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build-worker.sh"
"$root/scripts/build-www.sh"

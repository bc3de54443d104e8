#!/usr/bin/env bash
#! Runs the marker-parser fuzz target (cargo-fuzz on nightly) for a number of seconds (default 300).
# Usage: scripts/fuzz.sh [seconds]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/versions.sh"
"$root/scripts/setup.sh" fuzz
seconds="${1:-300}"
mkdir -p "$root/fuzz/corpus/markers"
# Seed the corpus with the shared vectors' texts and the benchmark fixtures.
python3 - "$root" <<'PY'
import json, sys, hashlib, pathlib
root = pathlib.Path(sys.argv[1])
out = root / "fuzz/corpus/markers"
texts = [c["text"] for c in json.load(open(root / "tests/vectors/markers.json"))["cases"]]
texts += [(root / "tests/fixtures" / f).read_text() for f in ("reply-2k.txt",)]
for t in texts:
    data = b"\x07" + t.encode()
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY
cd "$root/fuzz"
PATH="$CARGO_FUZZ_DIR/bin:$PATH" cargo +nightly fuzz run markers corpus/markers -- \
  -max_total_time="$seconds" -max_len=4096 -print_final_stats=1

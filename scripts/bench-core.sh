#!/usr/bin/env bash
#! Runs the native criterion benchmark of the marker parser and prints a summary table
#! (MB/s per input and chunk size, and the time ratio when the input doubles).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo bench -p stepwise-core --bench markers --locked -- --noplot "$@"
python3 - <<'PY'
import json, pathlib
base = pathlib.Path("target/criterion")
def mean_ns(group, bench, param):
    path = base / group / bench / param / "new" / "estimates.json"
    return json.loads(path.read_text())["mean"]["point_estimate"]
sizes = {"reply_2k": len(open("tests/fixtures/reply-2k.txt", "rb").read()),
         "payload_64k": len(open("tests/fixtures/schema-64k.txt", "rb").read())}
print("\n| input | chunk | time per parse | ns per chunk | MB/s |")
print("|---|---:|---:|---:|---:|")
for name, size in sizes.items():
    for chunk in (4, 16, 1024):
        ns = mean_ns(f"markers_{name}", "chunk", str(chunk))
        chunks = -(-size // chunk)
        print(f"| {name} | {chunk} B | {ns/1e3:.1f} µs | {ns/chunks:.1f} | {size/ns*1e3:.0f} |")
print("\n| doubling (16 B chunks) | time(n) | time(2n) | ratio |")
print("|---|---:|---:|---:|")
for small, big in (("reply_x8", "reply_x16"), ("payload_x1", "payload_x2")):
    a = mean_ns("markers_doubling", small, "16"); b = mean_ns("markers_doubling", big, "16")
    print(f"| {small} → {big} | {a/1e3:.1f} µs | {b/1e3:.1f} µs | {b/a:.2f} |")
PY

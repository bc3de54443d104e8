#!/usr/bin/env bash
#! Runs one research job with curl against a running Worker (scripts/dev.sh): a draft over every
#! configured provider (three offline ones by default), start, the events stream until the job
#! ends, then the result, published as a share link. Usage: scripts/curl-research.sh [base-url] [prompt]
#! An anonymous owner token is made for the run (OWNER=<32 hex digits> reuses one).
set -euo pipefail
base="${1:-http://127.0.0.1:8787}"
prompt="${2:-How do heat pumps compare with gas boilers for an old house?}"
json() { python3 -c "import json,sys; print(json.dumps({'prompt': sys.argv[1]}))" "$1"; }
field() { python3 -c "import json,sys; v=json.load(sys.stdin); print(eval('v' + sys.argv[1]))" "$1"; }
owner="${OWNER:-$(python3 -c 'import secrets; print(secrets.token_hex(16))')}"
auth="authorization: Bearer $owner"

draft=$(curl -sS -X POST "$base/api/research/draft" -H "$auth" -H 'content-type: application/json' -d "$(json "$prompt")")
id=$(field '["id"]' <<<"$draft")
echo "draft $id: $(field '["title"]' <<<"$draft") (providers: $(field '["selected_llms"]' <<<"$draft"))"
# Listen first, then start: the stream shows every change and ends when the job does.
curl -sS -N "$base/api/research/$id/events" -H "$auth" | python3 -u -c '
import json, sys
for line in sys.stdin:
    if line.startswith("data: "):
        d = json.loads(line[6:])
        if not d: continue
        kind = d.get("type", "snapshot")
        print("  " + " ".join(str(x) for x in (kind, d.get("provider", ""), d.get("status", ""), d.get("url", "")) if x))
' &
listener=$!
sleep 0.3
curl -sS -X POST "$base/api/research" -H "$auth" -H 'content-type: application/json' -d "{\"research_id\":\"$id\"}" >/dev/null
wait "$listener" || true
# Publishing is the owner's choice: share the report.
curl -sS -X POST "$base/api/research/$id/share" -H "$auth" -H 'content-type: application/json' >/dev/null
job=$(curl -sS "$base/api/research/$id" -H "$auth")
echo "status: $(field '["status"]' <<<"$job")"
echo "synthesis: $(field '.get("synthesized_result", "(none)")[:300]' <<<"$job")"
echo "share: $(field '.get("share_info", {}).get("url", "(not published)")' <<<"$job")"

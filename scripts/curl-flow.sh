#!/usr/bin/env bash
#! Walks the whole research_stream flow with curl against a running Worker (scripts/dev.sh):
#! each turn carries the last response's next_step, updated_config, skipped and turns, as a browser does.
#! Usage: scripts/curl-flow.sh [base-url]   (default http://127.0.0.1:8787). An anonymous owner
#! token is made for the run (OWNER=<32 hex digits> reuses one).
set -euo pipefail
base="${1:-http://127.0.0.1:8787}"
state='{"current_config":{},"skipped":[]}'   # what the client carries between turns
id="" token=""
owner="${OWNER:-$(python3 -c 'import secrets; print(secrets.token_hex(16))')}"

turn() { # turn MESSAGE [USER_ACTION_JSON]
  local body
  body=$(python3 - "$state" "$1" "${2:-}" "$id" <<'PY'
import json, sys
state, message, action, cid = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
body = {"message": message, "current_config": state["current_config"], "skipped": state["skipped"], "conversation_history": []}
if "next_step" in state: body["current_step"] = state["next_step"]
if action: body["user_action"] = json.loads(action)
if cid: body["conversation_id"], body["turns"] = cid, state["turns"]
print(json.dumps(body))
PY
)
  local response
  response=$(curl -sS -X POST "$base/api/chat" -H "authorization: Bearer $owner" -H 'accept: application/json' -H 'content-type: application/json' \
    ${token:+-H "x-conversation-token: $token"} -d "$body")
  printf '\n> %s %s\n' "$1" "${2:-}"
  state=$(python3 - "$response" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
if "error" in r and "next_step" not in r:
    sys.exit(f"error: {r['error']}")
print(f"< [{r['next_step']}] {r['message'][:110]}", file=sys.stderr)
if r.get("suggestions"): print(f"  suggestions: {r['suggestions']}", file=sys.stderr)
if r.get("options"): print(f"  options: {[o['value'] for o in r['options']]}", file=sys.stderr)
print(json.dumps({"next_step": r["next_step"], "current_config": r["updated_config"], "skipped": r["skipped"],
                  "turns": r.get("turns", 0), "id": r.get("conversation_id", ""), "token": r.get("conversation_token", "")}))
PY
)
  [ -z "$id" ] && id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$state")
  [ -z "$token" ] && token=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["token"])' "$state")
  return 0
}

turn "Monitor competitors for strategic planning"
turn "Track launches, pricing"
turn "competitive" '{"type":"option_selected","target_field":"stream_type","selected_value":"competitive"}'
turn "Continue" '{"type":"options_selected","target_field":"focus_areas","selected_values":["Oncology","Cardiology"]}'
turn "Skip" '{"type":"skip_step","target_field":"competitors"}'
turn "EGFR, KRAS, PD-1"
turn "Looks good" '{"type":"confirm"}'
printf '\n$ GET /api/conversations/%s (with its token)\n' "$id"
curl -sS "$base/api/conversations/$id" -H "authorization: Bearer $owner" -H "x-conversation-token: $token" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({k: d[k] for k in ("current_step","current_config","skipped","turns")}))'

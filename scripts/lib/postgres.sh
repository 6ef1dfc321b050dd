# A throwaway PostgreSQL cluster for the tests (docs/shared-store.md, "Testing"): Debian's server package, a
# cluster in a temporary directory, owned by the unprivileged `postgres` user when run as root, listening on
# 127.0.0.1 on a free port, and removed on exit. fsync and full-page writes are off, which only an operating
# system crash would notice; commits still wait for their WAL to be written, so a server killed mid-run (the
# restart test) loses nothing it acknowledged.
#
# The server speaks TLS (ssl=on) with a certificate for 127.0.0.1 and localhost from a certificate authority made
# here, so the whole suite runs over TLS (libpq's default sslmode=prefer) and the TLS tests can verify it.
#
#   source scripts/lib/postgres.sh; start_test_postgres   # exports CODEMODE_TEST_POSTGRES (a server URL) and
#                                                         # CODEMODE_TEST_POSTGRES_CA (the authority's PEM)

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
  _test_postgres_certificates "$TEST_POSTGRES_DIR/tls"
  TEST_POSTGRES_OPTIONS="-p $port -k $TEST_POSTGRES_DIR/run -c listen_addresses=127.0.0.1 -c fsync=off"
  TEST_POSTGRES_OPTIONS+=" -c ssl=on -c ssl_cert_file=$TEST_POSTGRES_DIR/tls/server.pem"
  TEST_POSTGRES_OPTIONS+=" -c ssl_key_file=$TEST_POSTGRES_DIR/tls/server.key"
  TEST_POSTGRES_OPTIONS+=" -c full_page_writes=off -c max_connections=400"
  _as_cluster_owner "$bin/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -l "$TEST_POSTGRES_DIR/run/log" \
    -o "$TEST_POSTGRES_OPTIONS" -w start >/dev/null
  export CODEMODE_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres"
  export CODEMODE_TEST_POSTGRES_CA="$TEST_POSTGRES_DIR/tls/ca.pem"
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

# A certificate authority and the server's certificate (127.0.0.1, localhost), the key owned by the cluster's
# owner and private, as the server insists.
_test_postgres_certificates() {
  local dir=$1
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=codemode test CA" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
    -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
  chmod 755 "$dir"
  chmod 644 "$dir/ca.pem" "$dir/server.pem"
  chmod 600 "$dir/server.key" "$dir/ca.key"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir/server.key" "$dir/server.pem"
  return 0
}

stop_test_postgres() {
  [ -n "${TEST_POSTGRES_DIR:-}" ] || return 0
  _as_cluster_owner "$(postgres_bin)/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$TEST_POSTGRES_DIR"
  unset TEST_POSTGRES_DIR CODEMODE_TEST_POSTGRES CODEMODE_TEST_POSTGRES_RESTART CODEMODE_TEST_POSTGRES_CA
}

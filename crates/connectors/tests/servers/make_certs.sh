#!/bin/sh
# Test certificates for remote_mcp.py: make_certs.sh DIR writes
#   DIR/ca.pem, DIR/ca.key          a test CA
#   DIR/server.pem, DIR/server.key  a leaf for DNS:localhost, IP:127.0.0.1 signed by that CA
#   DIR/other-ca.pem, other-ca.key  an unrelated CA, for the "wrong CA" case
# EC P-256 keys (PKCS#8 PEM). Quiet, and idempotent: once DIR/server.pem exists nothing is redone. The set is
# built in a scratch directory and renamed into place, so concurrent runs never see a half-made set.
set -eu
[ $# -eq 1 ] || { echo "usage: make_certs.sh DIR" >&2; exit 2; }
dir=${1%/}
[ -f "$dir/server.pem" ] && exit 0
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$dir.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Runs a command silently, showing its output only if it fails.
run() { out=$("$@" 2>&1) || { printf '%s\n' "$out" >&2; exit 1; }; }

cat >"$tmp/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF

key() { run openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/$1.key"; }
ca() {
    key "$1"
    run openssl req -x509 -new -key "$tmp/$1.key" -subj "/CN=$2" -days 3650 -sha256 \
        -config "$tmp/openssl.cnf" -extensions ca -out "$tmp/$1.pem"
}

ca ca "remote_mcp test CA"
ca other-ca "remote_mcp unrelated CA"
key server
run openssl req -new -key "$tmp/server.key" -subj "/CN=localhost" -config "$tmp/openssl.cnf" -out "$tmp/server.csr"
run openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" \
    -set_serial "0x$(openssl rand -hex 8)" -days 3650 -sha256 \
    -extfile "$tmp/openssl.cnf" -extensions leaf -out "$tmp/server.pem"
rm -f "$tmp/server.csr" "$tmp/openssl.cnf"
chmod 755 "$tmp"

# An absent or empty DIR is replaced whole; if another run got there first its set stands; into a DIR that already
# holds other files the set is copied, server.pem last.
if ! mv -T "$tmp" "$dir" 2>/dev/null && [ ! -f "$dir/server.pem" ]; then
    for f in ca.key ca.pem other-ca.key other-ca.pem server.key server.pem; do
        cp "$tmp/$f" "$dir/$f.part" && mv "$dir/$f.part" "$dir/$f"
    done
fi

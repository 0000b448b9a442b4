#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `boxmaker mcp --http` as a hostile local user meets it (docs/security.md, "MCP over HTTP"):
#   - a TCP listener, loopback included, is refused at start without a token, and so is a
#     token file other users can read;
#   - a Unix socket without a token is its owner's alone (0600, and other uids are refused);
#   - a missing or wrong token is 401 as soon as the headers arrive, before any body;
#   - the 401 names the protected resource metadata (RFC 9728), served without the token,
#     which says there is no authorization server; that server's metadata is 404 (curl);
#   - connections that send half a request cannot take the slots an authenticated client
#     needs: its tools/call is answered while they are still open;
#   - brokerd's audit lines of a call made through --http name the MCP peer, those of a call
#     that waits for approval too.
# Driven by http_token.mjs (Node.js, no packages; curl where it runs), against brokerd
# with fake.so.
#
#   http_token.sh BROKERD BOXMAKER RUNTIMEDIR
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../common/wait_socket.sh"

if ! command -v node >/dev/null 2>&1; then
  echo "SKIP mcp_http_token: node is not installed (Debian package nodejs)"
  [ "${BX_REQUIRE_MCP_SDK:-0}" = 1 ] && exit 1
  exit 77
fi

work=$(mktemp -d /tmp/bx-mcp-token.XXXXXX)
chmod 0755 "$work"
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/data" "$work/gated" "$work/home"
echo "hello" > "$work/data/hello.txt"

cat > "$work/broker.yaml" <<YAML
socket: $work/broker.sock
home: $work/home
audit: $work/audit.log
admin_socket: $work/admin.sock
admin_group: 4242
runtime:
  module: fake
  options:
    mode: echo
grants:
  - tools: [read_file]
    paths: [$work/data]
    class: internal
  - tools: [read_file]
    paths: [$work/gated]
    class: internal
    approval: always
    approval_timeout: 1m
YAML
"$brokerd" --config "$work/broker.yaml" --runtimedir "$runtimedir" 2> "$work/brokerd.log" &
pids="$pids $!"
wait_socket "$work/broker.sock" $!
[ -S "$work/broker.sock" ] || { echo "brokerd did not start:"; cat "$work/brokerd.log"; exit 1; }

BX_BOXMAKER=$boxmaker BX_WORK=$work node "$here/http_token.mjs"
status=$?
[ $status -eq 0 ] || { echo "--- brokerd.log"; tail -n 20 "$work/brokerd.log"; }
exit $status

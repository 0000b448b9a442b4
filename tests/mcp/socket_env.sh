#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `boxmaker mcp` finds brokerd through $BOXMAKER_SOCKET when --socket is not given, and
# --socket wins over it.  brokerd (fake.so, mode echo: a result, not the file's bytes) listens on a path of this test's own,
# never the default one, so a server that ignored the variable could not reach it.
#
#   socket_env.sh BROKERD BOXMAKER RUNTIMEDIR
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3
. "$(dirname "$0")/../common/wait_socket.sh"

work=$(mktemp -d /tmp/bx-mcp-env.XXXXXX)
chmod 0755 "$work"
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/data" "$work/home"
echo hello > "$work/data/hello.txt"
cat > "$work/broker.yaml" <<YAML
socket: $work/env-broker.sock
home: $work/home
audit: $work/audit.log
runtime:
  module: fake
  options:
    mode: echo
grants:
  - tools: [read_file]
    paths: [$work/data]
    class: internal
YAML
"$brokerd" --config "$work/broker.yaml" --runtimedir "$runtimedir" 2> "$work/brokerd.log" &
pids="$pids $!"
wait_socket "$work/env-broker.sock" $! ||
  { echo "FAIL: brokerd did not start:"; cat "$work/brokerd.log"; exit 1; }

# Sends one tools/call over stdio and keeps standard input open until it is answered (closing
# it would cancel the call); prints the answer.  Arguments: the options of boxmaker mcp.
call () {
  mkfifo "$work/in"
  "$boxmaker" mcp "$@" < "$work/in" > "$work/out" 2> "$work/err" &
  mcp=$!
  exec 3> "$work/in"
  printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\",\"arguments\":{\"path\":\"$work/data/hello.txt\"}}}" >&3
  i=0
  while ! grep -q '"id":1' "$work/out" && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
  exec 3>&-
  wait $mcp
  cat "$work/out"
  rm -f "$work/in" "$work/out"
}

fail=0
got=$(BOXMAKER_SOCKET=$work/env-broker.sock call --timeout-ms 20000)
case $got in
  *'"isError":false,"_meta":{"boxmaker/outcome":"result"'*)
    echo "PASS: without --socket, the call reaches brokerd at \$BOXMAKER_SOCKET" ;;
  *)
    echo "FAIL: without --socket, \$BOXMAKER_SOCKET was not used: $got"; cat "$work/err"; fail=1 ;;
esac

got=$(BOXMAKER_SOCKET=$work/nobody-here.sock call --socket "$work/env-broker.sock" --timeout-ms 20000)
case $got in
  *'"isError":false,"_meta":{"boxmaker/outcome":"result"'*) echo "PASS: --socket wins over \$BOXMAKER_SOCKET" ;;
  *) echo "FAIL: --socket did not win over \$BOXMAKER_SOCKET: $got"; cat "$work/err"; fail=1 ;;
esac

# The converse: the variable names a socket nobody listens on, so the call must fail.
got=$(BOXMAKER_SOCKET=$work/nobody-here.sock call --timeout-ms 20000)
case $got in
  *'the tool broker is unavailable'*) echo "PASS: a \$BOXMAKER_SOCKET nobody listens on is used, and fails" ;;
  *) echo "FAIL: \$BOXMAKER_SOCKET naming no socket: $got"; cat "$work/err"; fail=1 ;;
esac
[ $fail -eq 0 ] || { echo "--- brokerd.log"; tail -n 20 "$work/brokerd.log"; }
exit $fail

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# An MCP server through brokerd and podman.so with real podman: the standard-library test
# server (server.py) named in a grant (mcp_server) whose own image is the development image
# (python3), toolkit mounted into it by podman.so.  `boxmaker call py.read` reads a file in
# the granted folder but not one beside it, the server has no network of its own, and a
# JSON-RPC error of the server's is toolkit's refusal line.  The images are this test's own
# and are removed at its end.
#
#   podman.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT BUILD_IMAGE BUILD_DEV_IMAGE
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4 build_image=$5 build_dev=$6
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/wait_socket.sh"

skip () {
  echo "SKIP an MCP server under podman.so: $*"
  [ "${BX_REQUIRE_PODMAN:-0}" = 1 ] && exit 1
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (rootful podman with runc, as the podman tests run it)"
command -v podman >/dev/null || skip "podman is not installed"
# A sanitizer build's toolkit is not static: this test is not for that build, so it is
# skipped even where the runtime is required.
if ! file -b "$toolkit" | grep -q 'statically linked'; then
  echo "SKIP an MCP server under podman.so: this toolkit is not static (a sanitizer build), so it cannot run in another image"
  exit 77
fi

work=$(mktemp -d /tmp/bx-mcp-podman.XXXXXX)
chmod 0755 "$work"
tag=bx-mcp-servers-$$
pid=
cleanup () {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null
  wait 2>/dev/null
  ids=$(podman images -q --filter "reference=localhost/$tag-*" 2>/dev/null | sort -u)
  # shellcheck disable=SC2086
  [ -z "$ids" ] || podman rmi -f $ids >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }

tools=$("$build_image" --name "localhost/$tag-tools" --toolkit "$toolkit" 2> "$work/tools.log") \
  || skip "build-image.sh cannot build the tools image here: $(tail -n 3 "$work/tools.log")"
dev=$(sh "$build_dev" --quiet --name "localhost/$tag-dev" 2> "$work/dev.log") \
  || skip "build-dev-image.sh cannot build the development image here: $(tail -n 3 "$work/dev.log")"

mkdir -p "$work/grant" "$work/home"
cp "$here/server.py" "$work/grant/"
echo "in the grant" > "$work/grant/inside.txt"
echo "beside the grant" > "$work/beside.txt"
chmod -R a+rX "$work/grant"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
audit: $work/audit.log
runtime:
  module: podman
  options:
    image: $tools
    toolkit: $toolkit
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never]
grants:
  - mcp_server:
      name: py
      command: [python3, $work/grant/server.py]
    paths: [$work/grant]
    writable: false
    image: $dev
    class: internal
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/brokerd.log" &
pid=$!
wait_socket "$work/b.sock" $pid
[ -S "$work/b.sock" ] || { echo "brokerd did not start:"; cat "$work/brokerd.log"; exit 1; }
call () { # tool, arguments: the answer in $out
  out=$("$boxmaker" call "$1" "$2" --socket "$work/b.sock" 2> "$work/call.err")
  rc=$?
}

call py.read "{\"path\":\"$work/grant/inside.txt\"}"
[ $rc = 0 ] && [ "$out" = '{"content":[{"type":"text","text":"in the grant\n"}]}' ] \
  && grep -q 'class=internal untrusted=false' "$work/call.err" \
  && pass "py.read runs the server's tool in the development image under podman.so" \
  || fail "py.read: rc=$rc out=$out err=$(cat "$work/call.err")"
call py.read "{\"path\":\"$work/beside.txt\"}"
case $out in *'"isError":true'*'No such file or directory'*|*'No such file or directory'*'"isError":true'*)
  pass "a file beside the granted folder is not there for the server" ;;
  *) fail "read beside: rc=$rc out=$out" ;; esac
# 192.0.2.1 is TEST-NET-1: never routed, so even a container that leaked sends nothing out.
call py.connect '{"host":"192.0.2.1","port":443}'
case $out in *'"isError":true'*) case $out in *nreachable*) pass "the server has no network of its own" ;;
  *) fail "connect: $out" ;; esac ;; *) fail "connect: $out" ;; esac
call py.nosuch '{}'
[ "$out" = 'mcp_call: tools/call: the server answered with an error: -32602 Unknown tool: nosuch' ] \
  && pass "a JSON-RPC error of the server's is toolkit's refusal line" || fail "nosuch: $out"

[ $failures = 0 ] || { tail -n 20 "$work/brokerd.log"; exit 1; }
echo "ok: an MCP server under podman.so"

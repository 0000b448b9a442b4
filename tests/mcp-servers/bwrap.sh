#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# mcp_call under bwrap.so with real bubblewrap: the standard-library test server (server.py)
# runs inside the sandbox, in a grant's own root that holds python3 (the development tree of
# build-dev-image.sh --rootfs), with toolkit as its MCP client.  It lists its tools, reads a
# file in its granted folder but not one beside it, has no network of its own, gets the
# proxy variables when the grant has hosts, leaves no process behind, and a server that never
# answers ends at the time limit with the module's fixed sentence.  run_mcp_call hands the
# spec to bwrap.so as brokerd's runner would (no config names an MCP server yet).
#
# Last, the same server named in brokerd's config (a grant with mcp_server) answers
# `boxmaker call py.read` through brokerd and bwrap.so; brokerd lists its tools and those of
# three bad servers at start and reload, and `boxmaker mcp` offers and calls them, driven by
# the official MCP SDK (installed into NPM_DIR; without node or npm that part is skipped,
# exit 77 once the rest passed).
# With runsc installed, a second grant whose runtime is gvisor.so serves the same server as
# `pyg`, in the same root, on gVisor's kernel.
# A real Node.js server, @modelcontextprotocol/server-filesystem from npm, is a third kind:
# grant `fs`, run by the development tree's node, reads a file in its folder through
# `boxmaker call fs.read_text_file` and refuses a path outside it (without node, npm or the
# registry that part is skipped, exit 77 once the rest passed).
#
#   bwrap.sh RUN_MCP_CALL RUNTIMEDIR TOOLKIT BROKERD BOXMAKER BUILD_IMAGE BUILD_DEV_IMAGE NPM_DIR
set -u
run=$1 runtimedir=$2 toolkit=$3 brokerd=$4 boxmaker=$5 build_image=$6 build_dev=$7 npm_dir=$8
here=$(cd "$(dirname "$0")" && pwd)

skip () {
  echo "SKIP mcp_call under bwrap.so: $*"
  [ "${BX_REQUIRE_BWRAP:-0}" = 1 ] && exit 1
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (the cgroups of the limits, root-owned roots)"
command -v bwrap >/dev/null || skip "bubblewrap is not installed"
. "$here/../common/dev_root.sh"
# A sanitizer build's toolkit is not static: this test is not for that build, so it is
# skipped even where the runtime is required.
if ! static_toolkit "$toolkit"; then
  echo "SKIP mcp_call under bwrap.so: this toolkit is not static (a sanitizer build), so it cannot run in another root"
  exit 77
fi
. "$here/../bwrap/cgroup-host.sh"
. "$here/../common/wait_socket.sh"
cg_host mcp-servers
[ -n "$cg_kind" ] || skip "$cg_why"

work=$(mktemp -d /tmp/bx-mcp-bwrap.XXXXXX)
chmod 0755 "$work"
pid=
cleanup () {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
  for c in /sys/fs/cgroup/*/bx-mcp-gvisor-$$ /sys/fs/cgroup/bx-mcp-gvisor-$$; do
    [ -d "$c" ] && rmdir "$c" 2>/dev/null
  done
  cg_cleanup
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

"$build_image" --rootfs "$work/rootfs" --toolkit "$toolkit" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; fail "build-image.sh --rootfs"; exit 1; }
if ! dev_root "$build_dev" "$work/dev"; then
  echo "SKIP mcp_call under bwrap.so: $dev_root_why"
  exit 77
fi
dev=$dev_root

mkdir -p "$work/grant" "$work/egress"
cp "$here/server.py" "$work/grant/"
echo "in the grant" > "$work/grant/inside.txt"
echo "beside the grant" > "$work/beside.txt"
chmod -R a+rX "$work/grant"
# The sandbox's user is not the owner: the marks need a folder anyone may write.
chmod 0777 "$work/grant"
set -- rootfs="$work/rootfs" egress_dir="$work/egress" slots=2
[ -z "$cg_option" ] || set -- "$@" "$(echo "$cg_option" | sed 's/: /=/')"
options="$*"

# mcp_call TIME_MS MODE METHOD PARAMS [HOST...]: the answer line in $out.  The grant's folder
# is read-only, except for the modes that leave a mark there (the server's pid, a leftover's).
mcp_call () {
  t=$1 mode=$2 method=$3 params=$4
  shift 4
  case $mode in
    fork-away|silent) grant="rw:$work/grant" mark=",\"$work/grant/mark\"" ;;
    *) grant="ro:$work/grant" mark= ;;
  esac
  # shellcheck disable=SC2086
  out=$("$run" "$runtimedir" bwrap $options -- "$dev" "$t" \
    "{\"command\":[\"python3\",\"$work/grant/server.py\",\"$mode\"$mark],\"method\":\"$method\",\"params\":$params}" \
    "$grant" "$@" 2> "$work/run.err")
  rc=$?
  [ $rc = 0 ] || { echo "run_mcp_call: exit $rc: $out"; cat "$work/run.err"; }
}
call () { # TIME_MS MODE TOOL ARGUMENTS [HOST...]
  t=$1 mode=$2 tool=$3 args=$4
  shift 4
  mcp_call "$t" "$mode" tools/call "{\"name\":\"$tool\",\"arguments\":$args}" "$@"
}
leftovers () { pgrep -f "server.py [a-z-]* $work/grant/mark" ; }

mcp_call 60000 good tools/list '{}'
contains "$out" 'ok: {"tools":[{"name":"echo"' && contains "$out" '"name":"connect"' \
  && pass "tools/list of a Python server inside bwrap.so, in the grant's root" \
  || fail "tools/list: $out"

call 60000 good read "{\"path\":\"$work/grant/inside.txt\"}"
[ "$out" = 'ok: {"content":[{"type":"text","text":"in the grant\n"}]}' ] \
  && pass "the server reads a file in its granted folder" || fail "read inside: $out"

call 60000 good read "{\"path\":\"$work/beside.txt\"}"
contains "$out" '"isError":true' && contains "$out" 'No such file or directory' \
  && pass "a file beside the granted folder is not there for the server" \
  || fail "read beside: $out"

# 192.0.2.1 is TEST-NET-1: never routed, so even a sandbox that leaked sends nothing out.
call 60000 good connect '{"host":"192.0.2.1","port":443}'
contains "$out" '"isError":true' && contains "$out" 'unreachable' \
  && pass "a server that ignores the proxy has no network" || fail "connect: $out"

call 60000 good env '{"name":"HTTPS_PROXY"}'
contains "$out" '"text":"(unset)"' \
  && pass "without hosts the server gets no proxy variables" || fail "env without hosts: $out"
call 60000 good env '{"name":"HTTPS_PROXY"}' host:granted.bxtest.example
contains "$out" '"text":"http://127.0.0.1:' \
  && pass "with hosts the server gets toolkit's forwarder in its proxy variables" \
  || fail "env with hosts: $out"

call 60000 fork-away echo '{"text":"x"}'
[ "$out" = 'ok: {"content":[{"type":"text","text":"x"}]}' ] && [ -s "$work/grant/mark.leftover" ] \
  && [ -z "$(leftovers)" ] \
  && pass "a process the server left in a session of its own is gone after the call" \
  || fail "fork-away: $out; left: $(leftovers)"

call 60000 good nosuch '{}'
[ "$out" = 'refused: mcp_call: tools/call: the server answered with an error: -32602 Unknown tool: nosuch' ] \
  && pass "a JSON-RPC error is toolkit's refusal line" || fail "unknown tool: $out"

rm -f "$work/grant/mark"
call 2000 silent echo '{"text":"x"}'
[ "$out" = 'failed: the tool ran past its time limit' ] && [ -s "$work/grant/mark" ] \
  && [ -z "$(leftovers)" ] \
  && pass "a server that never answers ends at the time limit, nothing of it left" \
  || fail "silent: $out; left: $(leftovers)"

# Through brokerd: the server is a grant of the config, called as SERVER.TOOL.  With runsc
# installed, a second grant runs the same server in gVisor (a grant's runtime), in the same
# grant's root.
gvisor_runtime= gvisor_grant=
if command -v runsc > /dev/null; then
  gvisor_runtime="runtimes:
  strong:
    module: gvisor
    options:
      rootfs: $work/rootfs
      state_dir: $work/gvisor-state
      cgroup_path: /bx-mcp-gvisor-$$"
  gvisor_grant="  - mcp_server:
      name: pyg
      command: [python3, $work/grant/server.py]
    paths: [$work/grant]
    writable: false
    rootfs: $dev
    runtime: strong"
fi
# A real Node.js server from npm, @modelcontextprotocol/server-filesystem (the version
# package-lock.json pins), installed into a folder its grant reads and run by the development
# tree's node: the grant's paths are the installed package and the one folder it serves.
node_skipped= fs_grant=
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  node_skipped="node or npm is not installed (Debian packages nodejs, npm)"
else
  mkdir -p "$work/fs-npm" "$work/fs-data"
  echo "hello from node" > "$work/fs-data/hello.txt"
  cp "$here/package.json" "$here/package-lock.json" "$work/fs-npm/" &&
    (cd "$work/fs-npm" && npm ci --no-audit --no-fund --loglevel=error) > "$work/fs-npm.log" 2>&1 ||
    node_skipped="npm ci of server-filesystem failed (is the npm registry reachable?)"
fi
if [ -z "$node_skipped" ]; then
  fs_grant="  - mcp_server:
      name: fs
      command: [node, $work/fs-npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js, $work/fs-data]
    paths: [$work/fs-npm, $work/fs-data]
    writable: false
    rootfs: $dev"
fi
cg_line=
[ -z "$cg_option" ] || cg_line="    $cg_option"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
audit: $work/audit.log
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    slots: 2
$cg_line
$gvisor_runtime
grants:
  - mcp_server:
      name: py
      command: [python3, $work/grant/server.py]
    paths: [$work/grant]
    writable: false
    rootfs: $dev
    class: internal
  - mcp_server:
      name: garbage
      command: [python3, $work/grant/server.py, garbage]
    paths: [$work/grant]
    writable: false
    rootfs: $dev
  - mcp_server:
      name: silent
      command: [python3, $work/grant/server.py, silent]
    paths: [$work/grant]
    writable: false
    rootfs: $dev
    limits: {time: 3s}
  - mcp_server:
      name: hostile
      command: [python3, $work/grant/server.py, hostile]
    paths: [$work/grant]
    writable: false
    rootfs: $dev
$gvisor_grant
$fs_grant
YAML
mkdir -p "$work/home"
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/brokerd.log" &
pid=$!
wait_socket "$work/b.sock" $pid
if [ ! -S "$work/b.sock" ]; then
  fail "brokerd did not start: $(cat "$work/brokerd.log")"
else
  out=$("$boxmaker" call py.read "{\"path\":\"$work/grant/inside.txt\"}" --socket "$work/b.sock" 2> "$work/call.err")
  rc=$?
  [ $rc = 0 ] && [ "$out" = '{"content":[{"type":"text","text":"in the grant\n"}]}' ] \
    && grep -q 'class=internal untrusted=false' "$work/call.err" \
    && grep -q '"tool":"py.read",.*"decision":"allowed"' "$work/audit.log" \
    && pass "boxmaker call py.read runs the server's tool through brokerd and bwrap.so" \
    || fail "py.read through brokerd: rc=$rc out=$out err=$(cat "$work/call.err") log=$(cat "$work/brokerd.log")"
  if [ -n "$gvisor_grant" ]; then
    out=$("$boxmaker" call pyg.read "{\"path\":\"$work/grant/inside.txt\"}" --socket "$work/b.sock" 2> "$work/call.err")
    rc=$?
    [ $rc = 0 ] && [ "$out" = '{"content":[{"type":"text","text":"in the grant\n"}]}' ] \
      && grep -q '"tool":"pyg.read",.*"runtime":"strong"' "$work/audit.log" \
      && pass "the same server in a grant whose runtime is gvisor.so answers pyg.read" \
      || fail "pyg.read through brokerd and gvisor.so: rc=$rc out=$out err=$(cat "$work/call.err") log=$(cat "$work/brokerd.log")"
  else
    echo "not run: the server under gvisor.so (runsc is not installed)"
  fi
  if [ -n "$fs_grant" ]; then
    out=$("$boxmaker" call fs.read_text_file "{\"path\":\"$work/fs-data/hello.txt\"}" --socket "$work/b.sock" 2> "$work/call.err")
    rc=$?
    [ $rc = 0 ] && contains "$out" '"text":"hello from node\n"' \
      && pass "boxmaker call fs.read_text_file: the Node.js server from npm reads in its folder" \
      || fail "fs.read_text_file inside: rc=$rc out=$out err=$(cat "$work/call.err") log=$(cat "$work/brokerd.log")"
    out=$("$boxmaker" call fs.read_text_file "{\"path\":\"$work/grant/inside.txt\"}" --socket "$work/b.sock" 2> "$work/call.err")
    rc=$?
    contains "$out$(cat "$work/call.err")" "outside allowed directories" \
      && pass "the Node.js server refuses a path outside its folder" \
      || fail "fs.read_text_file outside: rc=$rc out=$out err=$(cat "$work/call.err")"
  fi
fi

# Each server's tools are listed once, off brokerd's start: the good one's five; the one
# that answers garbage and the one that never answers (ended by its time limit) offer none,
# logged for the owner; the hostile one keeps only the tools whose names are names, each
# once, across its two pages.
logged () { grep -c "$1" "$work/brokerd.log"; }
wait_logged () {
  i=0
  while [ "$(logged "$1")" -lt "$2" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
}
if [ -S "$work/b.sock" ]; then
  for line in 'MCP server py: 5 tool(s) listed' 'MCP server hostile: 6 tool(s) listed' \
      'MCP server garbage offers no tools until the next reload: mcp_call: initialize: the server wrote something that is not a JSON-RPC message' \
      'MCP server silent offers no tools until the next reload: the tool ran past its time limit'; do
    wait_logged "$line" 1
    [ "$(logged "$line")" = 1 ] && pass "listed at start: $line" \
      || fail "not in the log once: $line; log: $(cat "$work/brokerd.log")"
  done
  if [ -n "$gvisor_grant" ]; then
    wait_logged 'MCP server pyg: 5 tool(s) listed' 1
    [ "$(logged 'MCP server pyg: 5 tool(s) listed')" = 1 ] \
      && pass "listed at start under gvisor.so: MCP server pyg: 5 tool(s) listed" \
      || fail "pyg not listed once: $(cat "$work/brokerd.log")"
  fi
  # A reload lists them again.
  kill -HUP $pid
  wait_logged 'MCP server py: 5 tool(s) listed' 2
  wait_logged 'MCP server hostile: 6 tool(s) listed' 2
  [ -z "$gvisor_grant" ] || wait_logged 'MCP server pyg: 5 tool(s) listed' 2
  [ "$(logged 'MCP server py: 5 tool(s) listed')" = 2 ] \
    && pass "a reload lists the servers' tools again" \
    || fail "no listing after the reload: $(cat "$work/brokerd.log")"
fi

# boxmaker mcp offers the listed tools and calls them, driven by the official MCP SDK (the
# version tests/mcp pins, installed into NPM_DIR once).
sdk_skipped=
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  sdk_skipped="node or npm is not installed (Debian packages nodejs, npm)"
elif [ -S "$work/b.sock" ]; then
  mkdir -p "$npm_dir"
  if ! cmp -s "$here/../mcp/package-lock.json" "$npm_dir/package-lock.json" ||
     [ ! -d "$npm_dir/node_modules/@modelcontextprotocol/sdk" ]; then
    cp "$here/../mcp/package.json" "$here/../mcp/package-lock.json" "$npm_dir/" &&
      (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error) ||
      sdk_skipped="npm ci failed (is the npm registry reachable?)"
  fi
  if [ -z "$sdk_skipped" ]; then
    cp "$here/servers.test.mjs" "$npm_dir/"
    (cd "$npm_dir" && BX_BOXMAKER="$boxmaker" BX_SOCKET="$work/b.sock" BX_GRANT="$work/grant" \
       BX_GVISOR_SERVER="${gvisor_grant:+1}" BX_FS_SERVER="${fs_grant:+1}" \
       BX_BESIDE="$work/beside.txt" node --test servers.test.mjs) > "$work/sdk.out" 2>&1 \
      && pass "boxmaker mcp offers and calls the servers' tools (MCP SDK)" \
      || fail "the MCP SDK test: $(cat "$work/sdk.out"); log: $(cat "$work/brokerd.log")"
  fi
fi

[ $failures = 0 ] || exit 1
[ -z "$node_skipped" ] || echo "SKIP the Node.js server from npm: $node_skipped"
if [ -n "$sdk_skipped" ] || [ -n "$node_skipped" ]; then
  [ -z "$sdk_skipped" ] || echo "SKIP the MCP SDK part: $sdk_skipped"
  [ "${BX_REQUIRE_MCP_SDK:-0}" = 1 ] && exit 1
  exit 77
fi
echo "ok: mcp_call under bwrap.so"

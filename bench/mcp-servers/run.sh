#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh: one `tools/call` of a real Node.js MCP server from npm
# (@modelcontextprotocol/server-filesystem, `read_text_file` of a small file) through boxmaker
# against the same server run bare, in alternating rounds:
#   bare       `node .../dist/index.js FOLDER` started directly as the sandbox's uid (65534),
#              fed on its standard input what toolkit mcp_call sends (initialize,
#              notifications/initialized, the one tools/call), then end of input: the server's
#              own start-up plus the call, the floor
#   bwrap.so   `boxmaker call fs.read_text_file ARGS` -> brokerd -> bwrap.so, the server a
#              grant with `mcp_server` in the development tree (build-dev-image.sh --rootfs),
#              toolkit mcp_call its client in a fresh sandbox
#   podman     `podman run --rm -i` of the development image per call, the package and the
#              folder bound read-only, fed the same input (docker-run style; when podman is
#              installed and BENCH_PODMAN is not 0)
# For each side: p50 and p90 of the wall time, and the CPU time per call (the side's program
# and every descendant in a cgroup v1 cpuacct cgroup of the side's; for bwrap.so brokerd's
# own cpuacct cgroup, which holds its keepers and sandboxes, is added; podman puts its
# containers in cgroups of its own, so podman's figure leaves the server's time out); then
# the ratios bwrap.so/bare and podman/bare.  Goal: bwrap.so at most 1.2x bare.
#
#   bench/mcp-servers/run.sh BUILD_DIR [ROUNDS]    # default 20; BENCH_PODMAN=0: without
#
# BUILD_DIR holds a build of this tree (brokerd, boxmaker, toolkit, bwrap.so).  As root.
# Installs the server with `npm ci` (tests/mcp-servers/package-lock.json: needs the npm
# registry or its cache), builds the tools root, the development tree and, for podman, the
# development image (localhost/boxmaker-dev-bench-mcp); removes them all afterwards.
set -eu
build=$(cd "$1" && pwd)
rounds=${2:-20}
src=$(cd "$(dirname "$0")/../.." && pwd)
die () { echo "run.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (cgroups, the sandbox's uid, root-owned roots)"
command -v bwrap >/dev/null || die "bubblewrap is not installed"
node=$(command -v node) || die "node is not installed (Debian package nodejs)"
command -v npm >/dev/null || die "npm is not installed (Debian package npm)"
podman=
[ "${BENCH_PODMAN:-1}" = 0 ] || podman=$(command -v podman || true)
image=localhost/boxmaker-dev-bench-mcp
work=$(mktemp -d /tmp/bx-bench-mcp-servers.XXXXXX)
chmod 0755 "$work"
acct=/sys/fs/cgroup/cpuacct
[ -f "$acct/cpuacct.usage" ] || acct=
broker_pid=
cleanup () {
  [ -z "$broker_pid" ] || { kill "$broker_pid" 2>/dev/null || true; }
  wait 2>/dev/null || true
  # By name: build-dev-image.sh tags the image with its content's digest.
  [ -z "$podman" ] || for ref in $(podman images --filter "reference=$image" \
                 --format '{{.Repository}}:{{.Tag}}'); do
    podman rmi "$ref" >/dev/null 2>&1 || true
  done
  [ -z "$acct" ] || rmdir "$acct/bx-bench-mcp-brokerd-$$" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT PIPE TERM

cc -O2 -o "$work/tiers" "$src/bench/runtimes/tiers.c"
"$src/packaging/image/build-image.sh" --quiet --rootfs "$work/rootfs" \
  --toolkit "$build/toolkit/toolkit" > /dev/null
dev=$(sh "$src/packaging/image/build-dev-image.sh" --quiet --rootfs "$work/dev")
[ -z "$podman" ] || image_ref=$(sh "$src/packaging/image/build-dev-image.sh" --quiet --name "$image" | tail -n 1)

# The server, installed as tests/mcp-servers pins it, and the folder it serves.
npm_dir=$work/fs-npm data=$work/fs-data
mkdir -p "$npm_dir" "$data" "$work/home" "$work/egress"
cp "$src/tests/mcp-servers/package.json" "$src/tests/mcp-servers/package-lock.json" "$npm_dir/"
(cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error) > "$work/npm.log" 2>&1 \
  || { cat "$work/npm.log"; die "npm ci of server-filesystem failed (is the npm registry reachable?)"; }
echo "hello from node" > "$data/hello.txt"
chmod -R a+rX "$npm_dir" "$data"
server=$npm_dir/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

# What toolkit mcp_call writes to the server, one message a line (toolkit/mcp_server.c).
args="{\"path\":\"$data/hello.txt\"}"
cat > "$work/conversation.jsonl" <<JSON
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"boxmaker-toolkit","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":$args}}
JSON

cg=
if [ -n "$acct" ]; then
  cg=$acct/bx-bench-mcp-brokerd-$$
  mkdir "$cg"
fi
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
grants:
  - mcp_server:
      name: fs
      command: [node, $server, $data]
    paths: [$npm_dir, $data]
    writable: false
    rootfs: $dev
YAML
# brokerd in a cpuacct cgroup of its own: its keepers and sandboxes are charged there.
sh -c '[ -z "$1" ] || echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$cg" \
  "$build/broker/brokerd" --config "$work/b.yaml" --runtimedir "$build/runtimes/modules" \
  2> "$work/brokerd.log" &
broker_pid=$!
# Ready once the socket is there and the start-up listing of the server's tools is done
# (it runs the server once, which must not overlap the timed calls).
i=0
until [ -S "$work/b.sock" ] && grep -q 'MCP server fs' "$work/brokerd.log"; do
  i=$((i + 1))
  [ $i -le 1200 ] || { cat "$work/brokerd.log"; die "brokerd did not list the server"; }
  sleep 0.1
done
grep -q 'MCP server fs: [0-9]* tool(s) listed' "$work/brokerd.log" \
  || { cat "$work/brokerd.log"; die "brokerd could not list the server's tools"; }

bwrap_cpu=-
[ -z "$acct" ] || bwrap_cpu=$cg/cpuacct.usage
sides=$work/sides
{
  printf 'read_text_file\tbare\t65534\t%s\t-\t%s %s %s\n' \
    "$work/conversation.jsonl" "$node" "$server" "$data"
  printf 'read_text_file\tbwrap.so\t-1\t/dev/null\t%s\t%s call fs.read_text_file %s --socket %s\n' \
    "$bwrap_cpu" "$build/client/boxmaker" "$args" "$work/b.sock"
  [ -z "$podman" ] || printf 'read_text_file\tpodman\t-1\t%s\t-\t%s --runtime runc run --rm -i --pull=never --network=none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --user 65534:65534 --mount type=bind,src=%s,dst=%s,ro --mount type=bind,src=%s,dst=%s,ro %s node %s %s\n' \
    "$work/conversation.jsonl" "$podman" "$npm_dir" "$npm_dir" "$data" "$data" "$image_ref" "$server" "$data"
  printf 'RATIO\tbwrap.so\tbare\nRATIO\tpodman\tbare\nRATIO\tpodman\tbwrap.so\n'
} > "$sides"

# Once each, untimed: every side must answer with the file's text.
mkdir "$work/check"
"$work/tiers" "$sides" 1 0 "$work/check" || { cat "$work"/check/*.err; die "a side failed"; }
for f in "$work"/check/read_text_file.*; do
  case $f in *.err) continue ;; esac
  grep -q 'hello from node' "$f" || { cat "$f" "$f.err"; die "${f##*/} did not read the file"; }
done

uptime
echo "$rounds rounds, sides alternating; wall time in ms, CPU ms per call (mean)"
[ -n "$acct" ] || echo "note: no cgroup v1 cpuacct: CPU time is wait4's, brokerd's and its sandboxes' not counted"
"$work/tiers" "$sides" "$rounds" 0

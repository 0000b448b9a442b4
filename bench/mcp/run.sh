#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The MCP benchmark, in one command (bench/README.md, section mcp):
#
#   bench/mcp/run.sh [BUILD_DIR]      # default BUILD_DIR: build-bench at the top
#
# Builds brokerd, fake.so, boxmaker and the load generator (Release), starts brokerd with
# fake.so (mode fixed, no delay) and one read_file grant, and times the same call through
# the client library and as a tools/call through `boxmaker mcp`, in one run.
# BENCH_CALLS (default 5000) calls each way.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-bench}
calls=${BENCH_CALLS:-5000}

echo "building in $build ..."
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --target brokerd fake_runtime boxmaker bx_bench_mcp -j2 >/dev/null

work=$(mktemp -d /tmp/bx-bench-mcp.XXXXXX)
broker_pid=
cleanup () {
  set +e
  [ -z "$broker_pid" ] || { kill "$broker_pid" 2>/dev/null; wait "$broker_pid" 2>/dev/null; }
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

mkdir -p "$work/data" "$work/home"
echo hello > "$work/data/file"
cat > "$work/brokerd.yaml" <<YAML
socket: $work/broker.sock
home: $work/home
max_connections: 64
audit: $work/audit.log
runtime:
  module: fake
  options:
    mode: fixed
    content: hello
grants:
  - tools: [read_file]
    paths: [$work/data]
    class: private
YAML
"$build/broker/brokerd" --config "$work/brokerd.yaml" --runtimedir "$build/runtimes/modules" \
  2> "$work/brokerd.log" &
broker_pid=$!
i=0
while [ ! -S "$work/broker.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -S "$work/broker.sock" ] || { echo "brokerd did not start"; cat "$work/brokerd.log"; exit 1; }

BENCH_PATH=$work/data/file "$build/client/bx_bench_mcp" "$work/broker.sock" \
  "$build/client/boxmaker" "$calls"

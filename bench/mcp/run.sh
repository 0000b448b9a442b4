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

. "$top/bench/lib.sh"
bench_build "$build" brokerd fake_runtime boxmaker bx_bench_mcp
bench_workdir mcp
bench_fake_config "$work/brokerd.yaml" 64
bench_start_brokerd "$build" "$work/brokerd.yaml" "$work/broker.sock"

BENCH_PATH=$work/data/file "$build/client/bx_bench_mcp" "$work/broker.sock" \
  "$build/client/boxmaker" "$calls"

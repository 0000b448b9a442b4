#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The long fuzz run, one command away: builds the clang libFuzzer build (with ASan and UBSan)
# and runs every fuzz_* harness it contains for SECONDS each (default 600), starting from the
# corpora the smoke runs use.  New inputs stay in the build tree; a crash leaves its input as
# <build>/<harness>-crash-* and makes the script fail.
#
#   tests/fuzz/run-long.sh [seconds]        BX_FUZZ_BUILD=<dir> to choose the build folder
set -eu

seconds=${1:-600}
case $seconds in
  '' | *[!0-9]*)
    echo "usage: $0 [seconds]" >&2
    exit 2
    ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BX_FUZZ_BUILD:-$root/build-fuzz}
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DBX_SANITIZE=ON -DBX_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# Build only the harnesses: the long run should not wait for (or fail on) anything else.
targets=$(cmake --build "$build" --target help | sed -n 's/^\.\.\. \(fuzz_[A-Za-z0-9_]*\).*/\1/p')
if [ -z "$targets" ]; then
  echo "run-long: no fuzz_* targets in $build" >&2
  exit 1
fi
for t in $targets; do
  cmake --build "$build" --target "$t" -j"$jobs"
done

failed=""
summary=""
for t in $targets; do
  exe=$(find "$build" -type f -name "$t" -perm -u+x | head -n 1)
  if [ -z "$exe" ]; then
    echo "run-long: $t was built but not found" >&2
    failed="$failed $t"
    continue
  fi
  # The corpus folders are the ones the smoke test of this harness is registered with.
  dirs=$(ctest --test-dir "$build" -N -V -R "^${t}_smoke\$" 2>/dev/null \
    | sed -n 's/^.*Test command: //p' | grep -o '"[^"]*"' | tr -d '"' | grep -v '^-' || true)
  if [ -z "$dirs" ]; then
    dirs="$build/$t-corpus"
  fi
  for d in $dirs; do
    mkdir -p "$d" 2>/dev/null || true
  done
  log="$build/$t-long.log"
  echo "== $t: $seconds s (log: $log)"
  # shellcheck disable=SC2086  # the folders are separate arguments
  if "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/$t-" $dirs >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed="$failed $t"
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
  summary="$summary
$t: $status, ${runs:-?} runs, ${cov:-cov: ?}"
  if [ "$status" = FAILED ]; then
    tail -n 30 "$log"
  fi
done

echo "== summary$summary"
if [ -n "$failed" ]; then
  echo "run-long: failed:$failed" >&2
  exit 1
fi

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the real curl for the loopback test of http_fetch.  toolkit's fixed argument list
# sends curl through the egress socket and trusts the system's certificates; on loopback
# there is no proxy and the server's certificate is the test's own.  So this drops
# "--proxy <value>" and points "--cacert" at BX_TEST_CACERT, and passes every other
# argument through unchanged.  Both options must be there: otherwise it fails (exit 99),
# so a change to the fixed list cannot slip past the test.
set -eu
real="${BX_TEST_REAL_CURL:?}"
cacert="${BX_TEST_CACERT:?}"
saw_proxy=0
saw_cacert=0
n=$#
i=0
while [ "$i" -lt "$n" ]; do
  arg=$1
  shift
  i=$((i + 1))
  case "$arg" in
    --proxy)
      shift; i=$((i + 1)); saw_proxy=1 ;;
    --cacert)
      shift; i=$((i + 1)); saw_cacert=1; set -- "$@" --cacert "$cacert" ;;
    *)
      set -- "$@" "$arg" ;;
  esac
done
if [ "$saw_proxy" -ne 1 ] || [ "$saw_cacert" -ne 1 ]; then
  echo "curl-loopback: --proxy and --cacert were expected" >&2
  exit 99
fi
exec "$real" "$@"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every module in the build tree's runtimes folder exports exactly one dynamic symbol,
# bx_runtime_entry, as a function: anything else would leak into brokerd's symbol space or
# be found by a module loaded after it.
# usage: exports.sh NM RUNTIMEDIR
nm=$1
dir=$2
status=0
count=0
for required in refusing fake; do
  if [ ! -f "$dir/$required.so" ]; then
    echo "FAIL: $dir/$required.so is missing"
    status=1
  fi
done
for so in "$dir"/*.so; do
  [ -f "$so" ] || continue
  count=$((count + 1))
  # Global and weak symbols this object defines (undefined ones are what it imports).
  symbols=$("$nm" -D --defined-only --extern-only "$so" | awk '{ print $2 " " $3 }') || {
    echo "FAIL: $nm could not read $so"
    status=1
    continue
  }
  if [ "$symbols" != "T bx_runtime_entry" ]; then
    echo "FAIL: $so exports more or less than the entry:"
    echo "$symbols" | sed 's/^/    /'
    status=1
  else
    echo "ok: $(basename "$so") exports only bx_runtime_entry"
  fi
done
echo "$count modules checked"
[ "$count" -gt 0 ] || status=1
exit $status

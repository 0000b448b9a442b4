#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# podman.so exports one symbol, bx_runtime_entry: everything else (its own functions and the
# project's libraries it links) is hidden, so nothing of the module can clash with brokerd's
# own symbols or another module's.
#   exports.sh PODMAN_SO
set -u
functions=$(nm -D --defined-only "$1" | awk 'NF == 3 { print $3 }')
if [ "$functions" = bx_runtime_entry ]; then
  echo "ok: $1 exports only bx_runtime_entry"
else
  echo "FAIL: $1 exports: $functions"
  exit 1
fi

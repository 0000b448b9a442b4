#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# brokerd warns at start, where an operator looks, when its module declares itself no
# sandbox (BX_RUNTIME_NOT_A_SANDBOX), and says nothing of the kind for a module that does
# not.  `--check-config` goes through the same start as the daemon, up to listening.
# usage: brokerd_not_a_sandbox.sh BROKERD DECLARED_SO UNDECLARED_SO TOOLKIT
set -u
brokerd=$1 declared=$2 undeclared=$3 toolkit=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail () {
  echo "FAIL: $*"
  exit 1
}
for m in declared undeclared; do
  eval so=\$$m
  cat >"$tmp/$m.yaml" <<EOF2
socket: $tmp/$m.sock
home: $tmp/home
runtime:
  module: $so
  options:
    toolkit: $toolkit
grants: []
EOF2
  "$brokerd" --check-config "$tmp/$m.yaml" >"$tmp/$m.out" 2>"$tmp/$m.err"
  rc=$?
  cat "$tmp/$m.out" "$tmp/$m.err"
  [ "$rc" = 0 ] || fail "$m: --check-config exit $rc"
done
grep -q "^brokerd: WARNING: runtime naive ($declared) declares itself NOT A SANDBOX: " "$tmp/declared.err" \
  || fail "no warning for a module that declares itself no sandbox"
grep -q 'NOT A SANDBOX' "$tmp/undeclared.err" "$tmp/undeclared.out" \
  && fail "a warning for a module that does not declare itself no sandbox"
echo "ok: brokerd warns of a module that declares itself no sandbox"

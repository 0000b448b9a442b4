#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hole 3: the host keyring and new user namespaces.  Inside, add_key, keyctl and
# request_key fail and no user namespace can be made; host root's key stays untouched.
. "$(dirname "$0")/lib.sh"

writable_folder "$work/w"
build_probe "$work/w/probe"
key=$("$work/w/probe" host-add "bx-containment-$$") || fail "cannot add the host's test key"
host_key_cleanup () { [ -z "$key" ] || "$work/w/probe" host-del "$key" 2>/dev/null; cleanup; }
trap host_key_cleanup EXIT

start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/w]"
call b shell "{\"command\":\"./probe keys; ./probe userns\",\"cwd\":\"$work/w\"}"
echo "inside: $out"
for op in add_key keyctl request_key unshare clone clone3; do
  v=$(printf '%s\n' "$out" | sed -n "s/^$op=//p")
  case $v in
    "") fail "$op: no answer from the probe (rc=$rc err=$err)" ;;
    ok) fail "$op succeeded inside the sandbox" ;;
    *) pass "$op refused inside the sandbox ($v)" ;;
  esac
done
"$work/w/probe" host-has "$key" && pass "host root's key is still there" \
  || fail "host root's key is gone"
finish

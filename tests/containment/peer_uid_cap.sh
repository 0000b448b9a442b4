#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One client cannot starve the others: four idle connections from one uid (each with one
# byte of a request; with max_connections 4 that uid holds its two, and its two others wait
# in the queue) do not make another uid wait or hear "busy".  The other client is another
# uid (setpriv).  The holding uid itself, its share and its places in the queue taken, is
# told "brokerd is busy" (the client asks again a few times, then reports it).  Needs no
# sandbox: the refusing runtime answers the call.
if [ "${BX_CONTAINMENT_MODULE:-podman}" = bwrap ]; then
  echo "SKIP peer_uid_cap: does not apply to bwrap.so: no sandbox runs (the refusing runtime"
  echo "answers); it runs once, with the podman.so cases"
  exit 77
fi
BX_CONTAINMENT_MODULE=refusing
. "$(dirname "$0")/lib.sh"

cc -O1 -o "$work/hold" "$here/hold.c" || { fail "cannot build the holder"; finish; }
mkdir -p "$work/g"; chmod 0755 "$work/g"; echo hi > "$work/g/f"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
socket_mode: 0666
max_connections: 4
request_timeout_ms: 20000
grants:
  - tools: [read_file]
    paths: [$work/g]
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/b.sock" $!

"$work/hold" "$work/b.sock" 4 > "$work/held" &
pids="$pids $!"
i=0; until grep -q held "$work/held" 2>/dev/null || [ $i -gt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$boxmaker" call read_file "{\"path\":\"$work/g/f\"}" --socket "$work/b.sock" 2>&1)
contains "$out" "busy" && fail "another uid is told busy: $out" \
  || pass "another uid is served while one uid holds four idle connections ($out)"
contains "$out" "no tool runtime is configured" || fail "another uid's call was not answered: $out"
out=$("$boxmaker" call read_file "{\"path\":\"$work/g/f\"}" --socket "$work/b.sock" 2>&1)
contains "$out" "busy" && pass "the holding uid itself is told busy past its share and its queue" \
  || fail "the holding uid was not capped: $out"
finish

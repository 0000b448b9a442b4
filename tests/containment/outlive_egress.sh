#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hole 5, http_fetch: an interrupted fetch left its egress proxy container and its
# home/run/egress folder for ever.  A granted host (in a network namespace of this test's
# own, at an address the proxy counts as public) accepts connections and never answers,
# so the fetch hangs; brokerd is killed meanwhile.  Its proxy, its tool container and its
# egress folder must all go (under bwrap.so, the folder when the next brokerd starts).
. "$(dirname "$0")/lib.sh"
not_for gvisor "not adapted yet: it counts the two sandboxes of a fetch as podman and bwrap.so make them; outlive.sh and tests/gvisor/real-brokerd.sh cover gvisor.so's sandboxes outliving brokerd"

command -v ip >/dev/null || skip "no ip command (iproute2)"
ns=bxct$$
ip netns add "$ns" 2> "$work/netns.log" || skip "cannot make a network namespace: $(cat "$work/netns.log")"
netns_cleanup () {
  ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
  ip link del "bxch$$" 2>/dev/null
  ip netns del "$ns" 2>/dev/null
  cleanup
}
trap netns_cleanup EXIT
octet=$(( $$ % 250 + 1 ))
host_ip=45.46.$octet.1 web_ip=45.46.$octet.2
ip link add "bxch$$" type veth peer name "bxcn$$" &&
  ip link set "bxcn$$" netns "$ns" &&
  ip addr add "$host_ip/30" dev "bxch$$" && ip link set "bxch$$" up &&
  ip netns exec "$ns" ip addr add "$web_ip/30" dev "bxcn$$" &&
  ip netns exec "$ns" ip link set "bxcn$$" up || { fail "cannot wire the namespace"; finish; }
# Accepts, reads, never answers: curl waits in the TLS handshake.  Its standard input is a
# FIFO this shell holds open, so it never sees an end of input and closes.
mkfifo "$work/quiet"
exec 9<> "$work/quiet"
ip netns exec "$ns" busybox nc -l -p 443 < "$work/quiet" > /dev/null 2>&1 &
pids="$pids $!"

# podman: the host's name through --add-host, the egress folders in brokerd's home, removed by
# its watcher.  bwrap.so: a root of this case's own that knows the name (the fixture's
# toolkit), the egress folders in egress_dir, removed by the next brokerd's sweep.
egress=$work/home/run/egress
if [ "$module" = bwrap ]; then
  rootfs=$(sed -n 's/^ *rootfs: //p' "$BX_CONTAINMENT_OPTIONS")
  "$here/../../packaging/image/build-image.sh" --quiet --rootfs "$work/rootfs" \
    --toolkit "$rootfs/bin/toolkit" --add-host "slow.bxtest.example:$web_ip" > "$work/build.log" 2>&1 \
    || { fail "cannot build a root: $(cat "$work/build.log")"; finish; }
  egress=$work/egress
  # The fixture's other options stay (on cgroup v2, its cgroup_root).
  grep -v '^ *\(rootfs\|egress_dir\): ' "$BX_CONTAINMENT_OPTIONS" > "$work/options"
  printf '    rootfs: %s\n    egress_dir: %s\n' "$work/rootfs" "$egress" >> "$work/options"
  BX_CONTAINMENT_OPTIONS=$work/options
else
  extra_run="\"--add-host=slow.bxtest.example:$web_ip\""
fi
# running: the fetch's proxy and tool both run
running () {
  if [ "$module" = podman ]; then
    [ "$(podman ps --format '{{.Names}}' | grep -c -- "-$session-hang-")" = 2 ]
  else
    containers_left | grep -q '^curl\['
  fi
}
start_brokerd f "" "    http_fetch_ms: 60000" "  - tools: [http_fetch]
    hosts: [slow.bxtest.example]"
"$boxmaker" call http_fetch '{"url":"https://slow.bxtest.example/"}' --socket "$work/f.sock" \
  --session "$session" --call hang > "$work/hang.out" 2>&1 &
i=0
until running; do
  i=$((i + 1)); [ $i -lt 600 ] || { fail "the fetch's two containers did not start: $(cat "$work/hang.out")"; finish; }
  sleep 0.1
done
sleep 1
[ -n "$(ls -A "$egress" 2>/dev/null)" ] || fail "no egress folder while the fetch runs: $(cat "$work/hang.out")"
t0=$(date +%s)
kill -9 "$bpid"
wait_gone 30 && pass "brokerd killed during http_fetch: proxy and tool gone after $(( $(date +%s) - t0 )) s" \
  || fail "brokerd killed during http_fetch: left $(containers_left)"
# podman.so's watcher removes the folder once the containers are gone: give it its turn
# (seconds on a loaded machine), but not for ever.
i=0
while [ "$module" = podman ] && [ -n "$(ls -A "$egress" 2>/dev/null)" ] && [ $i -lt 600 ]; do
  sleep 0.1; i=$((i + 1))
done
if [ "$module" = bwrap ] && [ -n "$(ls -A "$egress" 2>/dev/null)" ]; then
  echo "the killed brokerd left its egress folder; the next brokerd's sweep must remove it"
  start_brokerd again "" "" "  - tools: [http_fetch]
    hosts: [slow.bxtest.example]"
fi
[ -z "$(ls -A "$egress" 2>/dev/null)" ] && pass "its egress folder is gone" \
  || fail "egress folders left: $(ls "$egress")"
finish

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hole 5, http_fetch: an interrupted fetch left its egress proxy container and its
# home/run/egress folder for ever.  A granted host (in a network namespace of this test's
# own, at an address the proxy counts as public) accepts connections and never answers,
# so the fetch hangs; brokerd is killed meanwhile.  Its proxy, its tool container and its
# egress folder must all go.
. "$(dirname "$0")/lib.sh"
not_for bwrap "it names the granted host through podman's --add-host and counts podman's containers"

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

extra_run="\"--add-host=slow.bxtest.example:$web_ip\""
start_brokerd f "" "    http_fetch_ms: 60000" "  - tools: [http_fetch]
    hosts: [slow.bxtest.example]"
"$boxmaker" call http_fetch '{"url":"https://slow.bxtest.example/"}' --socket "$work/f.sock" \
  --session "$session" --call hang > "$work/hang.out" 2>&1 &
i=0
until [ "$(podman ps --format '{{.Names}}' | grep -c -- "-$session-hang-")" = 2 ]; do
  i=$((i + 1)); [ $i -lt 150 ] || { fail "the fetch's two containers did not start: $(cat "$work/hang.out")"; finish; }
  sleep 0.1
done
sleep 1
[ -n "$(ls -A "$work/home/run/egress" 2>/dev/null)" ] || fail "no egress folder while the fetch runs: $(cat "$work/hang.out")"
t0=$(date +%s)
kill -9 "$bpid"
wait_gone 10 && pass "brokerd killed during http_fetch: proxy and tool gone after $(( $(date +%s) - t0 )) s" \
  || fail "brokerd killed during http_fetch: left $(containers_left)"
sleep 0.5
[ -z "$(ls -A "$work/home/run/egress" 2>/dev/null)" ] && pass "its egress folder is gone" \
  || fail "egress folders left: $(ls "$work/home/run/egress")"
finish

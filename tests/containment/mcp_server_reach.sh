#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A hostile MCP server reaches only what its grant gives.  Server `reach` (server.py, with
# the tools it answers but does not list) runs under bwrap.so with real bubblewrap, in the
# development tree as its grant's root, its one folder read-only and one host granted.  Each
# of these fails: reading a file beside its folder, brokerd's audit log, home or config;
# writing in its read-only folder, or anywhere on the host beside it; connecting straight to
# an address (a listener on the host's loopback, TEST-NET-1); connecting through its proxy to
# a host not granted (the audit line holds the proxy's refusal) or to an address; and a
# process it leaves in a session of its own does not outlive the call.
#
# bwrap.so only (BX_TOOLKIT and BX_BUILD_DEV_IMAGE name toolkit, which must be static, and
# build-dev-image.sh); the other runtimes' cases skip.
. "$(dirname "$0")/lib.sh"
not_for podman "it runs the server in the development tree as a grant's rootfs (tests/mcp-servers/podman.sh runs one in the development image)"
not_for gvisor "the MCP servers' gVisor run is tests/mcp-servers/bwrap.sh's pyg"
. "$here/../common/dev_root.sh"
[ -x "${BX_TOOLKIT:-}" ] && [ -n "${BX_BUILD_DEV_IMAGE:-}" ] \
  || skip "BX_TOOLKIT and BX_BUILD_DEV_IMAGE do not name toolkit and build-dev-image.sh"
static_toolkit "$BX_TOOLKIT" || { echo "SKIP $case_name: toolkit is not static (a sanitizer build)"; exit 77; }
dev_root "$BX_BUILD_DEV_IMAGE" "$work/dev" || skip "$dev_root_why"

mkdir -p "$work/grant" "$work/home"
cp "$here/../mcp-servers/server.py" "$work/grant/"
echo "in the grant" > "$work/grant/inside.txt"
echo "beside the grant" > "$work/beside.txt"
chmod -R a+rX "$work/grant"
# A listener on the host's loopback, which the server must not reach by itself.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"host listener\n"); c.close()
' > "$work/port" &
pids="$pids $!"
i=0; until [ -s "$work/port" ] || [ $i -gt 600 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$work/port")

start_brokerd b "audit: $work/audit.log" "" "  - mcp_server:
      name: reach
      command: [python3, $work/grant/server.py]
    paths: [$work/grant]
    writable: false
    rootfs: $dev_root
    hosts: [granted.bxtest.example]"
# The listing at start is a run of the server too: the calls below come after it.
i=0; until grep -q 'MCP server reach' "$work/b.log" || [ $i -gt 3000 ]; do sleep 0.1; i=$((i + 1)); done
grep -q 'MCP server reach: 5 tool(s) listed' "$work/b.log" \
  || fail "the server was not listed: $(grep 'MCP server' "$work/b.log")"

call b reach.read "{\"path\":\"$work/grant/inside.txt\"}"
contains "$out" '"text":"in the grant\n"' && pass "the server reads in its folder (the control)" \
  || fail "read inside: rc=$rc out=$out err=$err"
for f in "$work/beside.txt" "$work/audit.log" "$work/home" "$work/b.yaml"; do
  call b reach.read "{\"path\":\"$f\"}"
  contains "$out" "cannot read $f" && ! contains "$out" "beside the grant" \
    && pass "reading $(basename "$f") outside its folder fails: $out" \
    || fail "read $f: rc=$rc out=$out err=$err"
done

# In its read-only folder the write fails; beside it, it lands (if at all) in the sandbox's
# own throwaway tree, never on the host.
call b reach.write "{\"path\":\"$work/grant/planted\",\"text\":\"x\"}"
[ ! -e "$work/grant/planted" ] && contains "$out" "cannot write $work/grant/planted" \
  && pass "writing in its read-only folder fails: $out" \
  || fail "write in the folder: rc=$rc out=$out err=$err; $(ls -l "$work/grant/planted" 2>&1)"
for f in "$work/planted" "$work/home/planted"; do
  call b reach.write "{\"path\":\"$f\",\"text\":\"x\"}"
  [ ! -e "$f" ] && contains "$out" '"text":' \
    && pass "writing $f beside its folder leaves nothing on the host (the server saw: $out)" \
    || fail "write $f: rc=$rc out=$out err=$err; $(ls -l "$f" 2>&1)"
done

call b reach.connect "{\"host\":\"127.0.0.1\",\"port\":$port}"
contains "$out" "cannot connect" && ! contains "$out" "connected" \
  && pass "a direct connection to the host's loopback fails: $out" \
  || fail "connect to the host's listener: rc=$rc out=$out err=$err"
# 192.0.2.1 is TEST-NET-1: never routed, so even a sandbox that leaked sends nothing out.
call b reach.connect '{"host":"192.0.2.1","port":443}'
contains "$out" "cannot connect" && pass "a direct connection anywhere fails: $out" \
  || fail "connect to 192.0.2.1: rc=$rc out=$out err=$err"

# Through its proxy variables: a host not granted is the egress proxy's refusal, on the
# audit line; an address is refused before it leaves the sandbox (toolkit's forwarder sends
# none on), and nothing is allowed either way.
call b reach.via_proxy '{"host":"refused.bxtest.example","port":443}'
line=$(grep "\"call\":\"c$n\"" "$work/audit.log" | tail -1)
contains "$out" "HTTP/1.1 403" \
  && contains "$line" '"egress":[{"host":"refused.bxtest.example","port":443,"reply":2}]' \
  && pass "the proxy refuses a host not granted, and the audit line records it: $out" \
  || fail "via the proxy to refused.bxtest.example: rc=$rc out=$out err=$err; line: $line"
for target in 127.0.0.1:$port 192.0.2.1:443; do
  call b reach.via_proxy "{\"host\":\"${target%:*}\",\"port\":${target##*:}}"
  line=$(grep "\"call\":\"c$n\"" "$work/audit.log" | tail -1)
  contains "$out" "HTTP/1.1 403" && ! contains "$line" '"reply":0' \
    && pass "through the proxy, the address $target is refused: $out" \
    || fail "via the proxy to $target: rc=$rc out=$out err=$err; line: $line"
done

call b reach.leave '{}'
contains "$out" "left" || fail "leave: rc=$rc out=$out err=$err"
left=$(pgrep -f "$work/grant/server.py" || true)
[ -z "$left" ] && pass "nothing the server left outlives its call" \
  || fail "processes of the server left: $left"
finish

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Address families: a sandbox makes Unix, IPv4 and IPv6 sockets only.  vsock is not
# namespaced (a VM's host side listens there), netlink and packet sockets reach into the
# kernel and its devices, AF_ALG into its crypto code: each is refused with EAFNOSUPPORT,
# through socket and socketpair alike, also with bits above the int the kernel reads, and
# the i386 entry points (socketcall, whose arguments are in memory) let nothing through.
. "$(dirname "$0")/lib.sh"
not_for gvisor "its refusals hold in gVisor's kernel, but runsc 20221219's OCI seccomp filter answers EPERM whatever errnoRet says, and this case checks each errno of the table (tests/gvisor/conformance.sh checks the setuid refusals)"

writable_folder "$work/w"
build_seccomp_probe "$work/w/seccomp_probe"
start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/w]"
call b shell "{\"command\":\"./seccomp_probe families\",\"cwd\":\"$work/w\"}"
echo "inside:"
printf '%s\n' "$out"
for family in AF_VSOCK AF_NETLINK AF_PACKET AF_ALG AF_KEY AF_XDP AF_TIPC AF_BLUETOOTH AF_CAN \
              AF_RDS AF_QIPCRTR AF_MCTP AF_APPLETALK; do
  for call in socket socketpair; do
    v=$(printf '%s\n' "$out" | sed -n "s/^$call($family)=//p")
    case $v in
      EAFNOSUPPORT) pass "$call($family) refused" ;;
      "") fail "$call($family): no answer from the probe (rc=$rc err=$err)" ;;
      *) fail "$call($family) inside the sandbox: $v, EAFNOSUPPORT expected" ;;
    esac
  done
done
v=$(printf '%s\n' "$out" | sed -n 's/^socket(AF_VSOCK|1<<32)=//p')
[ "$v" = EAFNOSUPPORT ] && pass "AF_VSOCK with a bit above the int refused" \
  || fail "AF_VSOCK with a bit above the int: '$v', EAFNOSUPPORT expected"
if [ "$(uname -m)" = x86_64 ]; then
  for line in "i386 socketcall(AF_VSOCK)" "i386 chmod(4755)"; do
    v=$(printf '%s\n' "$out" | grep -F "$line=" | sed 's/^FAIL //; s/^[^=]*=//')
    case $v in
      "") fail "$line: no answer from the probe (rc=$rc err=$err)" ;;
      ok*) fail "$line went through the i386 entry point" ;;
      *) pass "$line: $v" ;;
    esac
  done
  [ -u "$work/w/i386-chmod" ] && fail "the i386 chmod left a setuid file"
fi

# What toolkit's tools use still works: a Unix socket pair, an IPv4 and an IPv6 socket.
call b shell "{\"command\":\"./seccomp_probe table | grep -E '^(FAIL )?socket(pair)?\\\\((1|2|10|AF_UNIX)\\\\)'\",\"cwd\":\"$work/w\"}"
case $out in
  *FAIL*|"") fail "an allowed family was refused: $out (rc=$rc err=$err)" ;;
  *) pass "Unix, IPv4 and IPv6 sockets still made: $(printf '%s' "$out" | tr '\n' ' ')" ;;
esac
finish

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# dropin-bwrap.sh DROPIN BROKERD BOXMAKER TOOLKIT RUNTIMEDIR UNIT_FILTERS RESTRICT_SUID
# BUILD_IMAGE: brokerd with bwrap.so runs as the drop-in DROPIN (brokerd-bwrap.conf) makes
# systemd run it, rebuilt since systemd is not PID 1 here: as root with the drop-in's
# CapabilityBoundingSet (setpriv --bounding-set), under its seccomp filters (UNIT_FILTERS:
# SystemCallArchitectures, LockPersonality, RestrictRealtime, ProtectKernelModules,
# ProtectKernelLogs; RESTRICT_SUID: RestrictSUIDSGID).  Every tool still runs: read_file,
# write_file, shell, and http_fetch through the egress proxy and slirp4netns (to a name
# that does not resolve: no network is needed); a sandboxed chmod 4755 is refused; with
# sandboxes made ahead (the option pool), calls run in them, the call's folders mounted in.
set -u
dropin=$1 brokerd=$2 boxmaker=$3 toolkit=$4 runtimedir=$5 filters=$6 restrict=$7 build_image=$8
skip () { echo "SKIP: $*"; exit 77; }
fail () { echo "FAIL: $*"; [ -z "${tmp:-}" ] || cat "$tmp/brokerd.log" 2>/dev/null; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (the drop-in runs brokerd as root)"
command -v bwrap >/dev/null || skip "bubblewrap is not installed"
command -v slirp4netns >/dev/null || skip "slirp4netns is not installed"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"

# What the drop-in sets, and what this test rebuilds of it: a new option must be added here.
grep -qx 'User=root' "$dropin" && grep -qx 'Delegate=yes' "$dropin" \
  || fail "the drop-in no longer sets User=root and Delegate=yes: update this test"
known='User Delegate CapabilityBoundingSet RestrictSUIDSGID SystemCallArchitectures LockPersonality RestrictRealtime ProtectKernelModules ProtectKernelLogs'
for key in $(sed -n 's/^\([A-Za-z]*\)=.*/\1/p' "$dropin" | sort -u); do
  case " $known " in *" $key "*) ;; *) fail "the drop-in sets $key=, which this test does not rebuild" ;; esac
done
for line in RestrictSUIDSGID=yes SystemCallArchitectures=native LockPersonality=yes \
            RestrictRealtime=yes ProtectKernelModules=yes ProtectKernelLogs=yes; do
  grep -qx "$line" "$dropin" || fail "the drop-in no longer sets $line: update this test"
done
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$dropin" | tr ' ' '\n' | grep . \
         | sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd, -)
[ -n "$caps" ] || fail "the drop-in sets no CapabilityBoundingSet="

tmp=$(mktemp -d /tmp/bx-dropin-bwrap.XXXXXX)
chmod 0755 "$tmp" # the sandbox's uid must enter the folders above the root and the grant
pid=
cleanup () {
  [ -z "$pid" ] || { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
  rm -rf "$tmp"
}
trap cleanup EXIT
"$build_image" --quiet --rootfs "$tmp/rootfs" --toolkit "$toolkit" >/dev/null \
  || fail "cannot build the root"
mkdir -p "$tmp/g" "$tmp/home"
echo "hello from the host" > "$tmp/g/notes.txt"
chown 65534:65534 "$tmp/g"
cat > "$tmp/brokerd.yaml" <<EOF
socket: $tmp/b.sock
home: $tmp/home
runtime:
  module: bwrap
  options:
    rootfs: $tmp/rootfs
    pool: 2
grants:
  - tools: [read_file, write_file, shell]
    paths: [$tmp/g]
  - tools: [http_fetch]
    hosts: [no-such-host.invalid]
EOF
setpriv --bounding-set "-all,$caps" "$filters" "$restrict" \
  "$brokerd" --config "$tmp/brokerd.yaml" --runtimedir "$runtimedir" --debug >"$tmp/brokerd.log" 2>&1 &
pid=$!
i=0
while [ ! -S "$tmp/b.sock" ]; do
  kill -0 "$pid" 2>/dev/null || { pid=; fail "brokerd did not start"; }
  i=$((i + 1)); [ $i -lt 600 ] || fail "brokerd does not listen"
  sleep 0.1
done
call () { "$boxmaker" call --socket "$tmp/b.sock" --timeout-ms 60000 "$@" 2>&1; }

out=$(call read_file "{\"path\":\"$tmp/g/notes.txt\"}") \
  && printf '%s' "$out" | grep -q "hello from the host" || fail "read_file: $out"
out=$(call write_file "{\"path\":\"$tmp/g/new.txt\",\"content\":\"written\"}") \
  && [ "$(cat "$tmp/g/new.txt")" = written ] || fail "write_file: $out"
out=$(call shell "{\"command\":\"cp /bin/busybox s; chmod 4755 s; echo chmod=\$?\",\"cwd\":\"$tmp/g\"}") \
  && printf '%s' "$out" | grep -q "chmod=1" || fail "shell, chmod 4755 not refused: $out"
[ ! -u "$tmp/g/s" ] || fail "a setuid file was left: $(ls -l "$tmp/g/s")"
out=$(call http_fetch '{"url":"https://no-such-host.invalid/"}')
printf '%s' "$out" | grep -q "could not resolve no-such-host.invalid" \
  || fail "http_fetch did not reach the egress proxy: $out"
grep -q "runs in a sandbox made ahead" "$tmp/brokerd.log" \
  || fail "no call ran in a sandbox made ahead"
! grep "cannot mount the call's folders" "$tmp/brokerd.log" \
  || fail "a call's folders could not be mounted into a sandbox made ahead"
kill -TERM "$pid"
wait "$pid" || { pid=; fail "brokerd did not exit 0"; }
pid=
echo "PASS: with the drop-in's bounding set ($caps) and filters, read_file, write_file, shell (chmod 4755 refused) and http_fetch (through the proxy) run, in sandboxes made ahead where they can"

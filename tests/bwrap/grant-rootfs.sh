#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A grant's own root under bwrap.so, with real bubblewrap: the development tree that
# build-dev-image.sh --rootfs writes, named by a grant's `rootfs:` pinned by its digest,
# runs `python3 -c` and gcc through shell, with toolkit mounted read-only from the module's
# root, and names it on the audit line; a shell with hosts there goes through the egress
# proxy; a reload to a wrong digest keeps the running config; a root moved into place
# after its check runs nothing until a reload checks it;
# a wrong digest, a missing root, a root another user or group could change, an image and a
# granted folder inside the root are each refused by --check-config naming
# FILE:LINE:COLUMN, and brokerd does not start with a wrong digest.
#
#   grant-rootfs.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT BUILD_IMAGE BUILD_DEV_IMAGE
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4 build_image=$5 build_dev=$6

skip () {
  echo "SKIP a grant's rootfs under bwrap.so: $*"
  [ "${BX_REQUIRE_BWRAP:-0}" = 1 ] && exit 1
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (the cgroups of the limits, root-owned roots)"
command -v bwrap >/dev/null || skip "bubblewrap is not installed"
. "$(dirname "$0")/cgroup-host.sh"
. "$(dirname "$0")/../common/wait_socket.sh"
cg_host bwrap-grant-root
[ -n "$cg_kind" ] || skip "$cg_why"
# A toolkit that is not static (a sanitizer build) cannot run in another root: the calls in
# it are skipped, and the grant's root is a second tools root, which a sanitizer build
# hashes in seconds rather than minutes; the checks of the roots still run.
static=1
file -b "$toolkit" | grep -q 'statically linked' || static=0

work=$(mktemp -d /tmp/bx-bwrap-rootfs.XXXXXX)
chmod 0755 "$work"
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
  cg_cleanup
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

"$build_image" --rootfs "$work/rootfs" --toolkit "$toolkit" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; fail "build-image.sh --rootfs"; exit 1; }
start=$(date +%s)
if [ $static = 0 ]; then
  "$build_image" --rootfs "$work/dev" --toolkit "$toolkit" > "$work/dev.log" 2>&1 \
    || { cat "$work/dev.log"; fail "build-image.sh --rootfs for the grant's root"; exit 1; }
  dev="$work/dev@$(sed -n 's/^ *rootfs_digest: \(sha256:[0-9a-f]*\)$/\1/p' "$work/dev.log")"
elif ! dev=$(sh "$build_dev" --quiet --rootfs "$work/dev" 2> "$work/dev.log"); then
  # Its packages are this host's: where they are missing the tree cannot be built, which
  # is no fault of bwrap.so (even where bubblewrap is required).
  echo "SKIP a grant's rootfs: build-dev-image.sh --rootfs cannot build the development tree here: $(cat "$work/dev.log")"
  exit 77
else
  echo "the development tree: $dev, built in $(( $(date +%s) - start )) s"
fi
case $dev in "$work/dev@sha256:"?*) pass "the grant's root is DIR@sha256:<digest>" ;;
  *) fail "the grant's root is \"$dev\"" ;; esac
hex=${dev#*@sha256:}
case $hex in 0*) wrong="$work/dev@sha256:1${hex#?}" ;; *) wrong="$work/dev@sha256:0${hex#?}" ;; esac

mkdir -p "$work/grant" "$work/home" "$work/net"
chmod 0777 "$work/grant" "$work/net"
session=bwraprootfs-$$

# The cgroup v2 subtree's option line, when there is one; the grant's line number after it.
cg_line='' gl=13
[ -z "$cg_option" ] || { cg_line="    $cg_option
" gl=14; }
config () { # name, the grant's root line, extra grant
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
home: $work/home
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    slots: 2
${cg_line}grants:
  - tools: [read_file, write_file, shell]
    paths: [$work/grant]
    class: private
$2
${3:-}
YAML
}
check () { # name: rc, out and err of --check-config
  "$brokerd" --check-config "$work/$1.yaml" --runtimedir "$runtimedir" > "$work/$1.out" 2> "$work/$1.err"
  rc=$? out=$(cat "$work/$1.out") err=$(cat "$work/$1.err")
}

# The grant's root, pinned by the digest the build printed: checked, and calls run in it.
config dev "    rootfs: $dev" "  - tools: [shell]
    paths: [$work/net]
    hosts: [granted.bxtest.example]
    rootfs: $dev"
check dev
[ $rc = 0 ] && contains "$out" "in rootfs $dev" \
  && pass "--check-config accepts the grant's root at its digest" \
  || fail "--check-config dev: rc=$rc out=$out err=$err"
"$brokerd" --config "$work/dev.yaml" --runtimedir "$runtimedir" 2> "$work/dev-brokerd.log" &
dev_pid=$!
pids="$pids $dev_pid"
wait_socket "$work/dev.sock" $!
[ -S "$work/dev.sock" ] || { echo "brokerd did not start:"; cat "$work/dev-brokerd.log"; exit 1; }
grep -q "a grant's root $work/dev matches its digest" "$work/dev-brokerd.log" \
  && pass "brokerd's log says the grant's root matched its digest" \
  || fail "no log line for the root: $(cat "$work/dev-brokerd.log")"
call () { # tool, arguments
  out=$("$boxmaker" call "$1" "$2" --socket "$work/dev.sock" --session "$session" 2> "$work/call.err")
  rc=$? err=$(cat "$work/call.err")
}
if [ $static = 0 ]; then
  echo "SKIP the calls in a grant's root: this toolkit is not static (a sanitizer build), so it cannot run in another root"
else
cat > "$work/grant/work.sh" <<'SH'
python3 -c 'import sys; print("python", sys.version_info[0], 6 * 7)'
node -e 'console.log("node", 6 * 7)'
printf '#include <stdio.h>\nint main (void) { puts ("built by gcc"); return 0; }\n' > /tmp/h.c
gcc -o /tmp/h /tmp/h.c && /tmp/h
echo "PATH=$PATH"
(: > /run/boxmaker/toolkit) 2>/dev/null || echo toolkit read-only
echo x > /usr/bin/boxmaker-x 2>/dev/null || echo root read-only
SH
call shell "{\"command\":\"sh work.sh\",\"cwd\":\"$work/grant\"}"
[ $rc = 0 ] && contains "$out" "python 3 42" && contains "$out" "node 42" && contains "$out" "built by gcc" \
  && contains "$out" "root read-only" && [ ! -e "$work/dev/usr/bin/boxmaker-x" ] \
  && pass "shell in the grant's root: python3 -c, node -e and gcc run, the root is read-only" \
  || fail "shell in the development tree: rc=$rc out=$out err=$err"
shell_out=$out
call shell "{\"command\":\"xargs -0 echo < /proc/\$PPID/cmdline\",\"cwd\":\"$work/grant\"}"
contains "$shell_out" "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  && contains "$out" "/run/boxmaker/toolkit shell" && contains "$shell_out" "toolkit read-only" \
  && pass "the shell's parent is toolkit at /run/boxmaker/toolkit, read-only; PATH is Debian's" \
  || fail "toolkit in the grant's root: out=$shell_out / $out"
call shell "{\"command\":\"readlink /bin; ls /bin/sh /usr/bin/python3\",\"cwd\":\"$work/grant\"}"
[ $rc = 0 ] && contains "$out" "usr/bin" && contains "$out" "/usr/bin/python3" \
  && pass "the root's own links (/bin -> usr/bin) and /bin/sh are there" \
  || fail "root links: rc=$rc out=$out err=$err"
call write_file "{\"path\":\"$work/grant/w.txt\",\"content\":\"written in the dev root\"}"
call read_file "{\"path\":\"$work/grant/w.txt\"}"
[ $rc = 0 ] && contains "$out" "written in the dev root" \
  && pass "read_file and write_file run in the grant's root too" \
  || fail "files in the dev root: rc=$rc out=$out err=$err"
# A shell with hosts in the grant's root: the proxy's variables are set, and curl of the
# root reaches the proxy, which refuses a host the grant does not list.
call shell "{\"command\":\"echo proxy=\$HTTPS_PROXY; curl -sS https://other.bxtest.example/ 2>&1; echo rc=\$?\",\"cwd\":\"$work/net\"}"
[ $rc = 0 ] && contains "$out" "proxy=http://127.0.0.1:" && contains "$out" "403" \
  && ! contains "$out" "rc=0" \
  && pass "a shell with hosts in the grant's root goes through the egress proxy, which refuses another host" \
  || fail "shell with hosts in the grant's root: rc=$rc out=$out err=$err"
grep -q "\"tool\":\"shell\".*\"rootfs\":\"$dev\"" "$work/dev-brokerd.log" \
  && pass "the audit line of a call in the grant's root names it" \
  || fail "no rootfs on the audit line: $(cat "$work/dev-brokerd.log")"
fi

# A reload to a wrong digest keeps the running config, and calls still run in the root.
cp "$work/dev.yaml" "$work/dev.good"
sed -i "s|$dev|$wrong|" "$work/dev.yaml"
kill -HUP "$dev_pid"
i=0
while ! grep -q "reload: the config stays as it was" "$work/dev-brokerd.log" && [ $i -lt 1200 ]; do
  sleep 0.1; i=$((i + 1))
done
rc=0 out=42
[ $static = 0 ] || call shell "{\"command\":\"python3 -c 'print(7 * 6)'\",\"cwd\":\"$work/grant\"}"
[ $rc = 0 ] && contains "$out" "42" && grep -q "not the pinned" "$work/dev-brokerd.log" \
  && pass "a reload to a wrong digest is refused; the root still serves" \
  || fail "reload to a wrong digest: rc=$rc out=$out $(cat "$work/dev-brokerd.log")"
cp "$work/dev.good" "$work/dev.yaml"

# The root written again (a new folder moved into its place, with the same content): no call
# runs in it until a reload has checked it.
if [ $static = 1 ]; then
  mv "$work/dev" "$work/dev.old"
  mkdir -m 0755 "$work/dev"
  find "$work/dev.old" -mindepth 1 -maxdepth 1 -exec mv -t "$work/dev" {} +
  rmdir "$work/dev.old"
  call shell "{\"command\":\"python3 -c 'print(7 * 6)'\",\"cwd\":\"$work/grant\"}"
  [ $rc = 1 ] && contains "$err" "the tool runner could not start the container" \
    && grep -q "is not the folder that was checked" "$work/dev-brokerd.log" \
    && pass "a root moved into place after its check: no call runs in it" \
    || fail "root replaced: rc=$rc out=$out err=$err"
  kill -HUP "$dev_pid"
  i=0
  while ! grep -q "reload: .* grant(s) now serve" "$work/dev-brokerd.log" && [ $i -lt 1200 ]; do
    sleep 0.1; i=$((i + 1))
  done
  call shell "{\"command\":\"python3 -c 'print(7 * 6)'\",\"cwd\":\"$work/grant\"}"
  [ $rc = 0 ] && contains "$out" "42" \
    && pass "after a reload checks it again, calls run in the new root" \
    || fail "root after reload: rc=$rc out=$out err=$err"
fi

# A wrong digest: --check-config names the grant's line and column, brokerd does not start.
config wrong "    rootfs: $wrong"
check wrong
[ $rc != 0 ] && contains "$err" "$work/wrong.yaml:$gl:13: grant 1 rootfs $wrong: $work/dev holds sha256:$hex, not the pinned" \
  && pass "a wrong digest: --check-config refuses it at FILE:LINE:COLUMN" \
  || fail "wrong digest: rc=$rc out=$out err=$err"
timeout 120 "$brokerd" --config "$work/wrong.yaml" --runtimedir "$runtimedir" > "$work/wrong.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "not the pinned" "$work/wrong.log" && [ ! -S "$work/wrong.sock" ] \
  && pass "a wrong digest: brokerd does not start" \
  || fail "wrong digest start: rc=$rc $(cat "$work/wrong.log")"

# A missing root.
config missing "    rootfs: $work/none@sha256:$hex"
check missing
[ $rc != 0 ] && contains "$err" "$work/missing.yaml:$gl:13: grant 1 rootfs $work/none@sha256:$hex: $work/none is not a folder" \
  && pass "a missing root: --check-config refuses it at FILE:LINE:COLUMN" \
  || fail "missing root: rc=$rc out=$out err=$err"

# A root another user could change, then one inside a granted folder.
chmod o+w "$work/dev/etc"
check dev
chmod o-w "$work/dev/etc"
[ $rc != 0 ] && contains "$err" "etc belongs to uid 0 gid 0 with mode 757: every entry must belong to root and be writable by no one else" \
  && pass "a root with a folder others can write is refused" \
  || fail "writable root: rc=$rc out=$out err=$err"
# Not even a sticky folder: anyone could put a file there, which changes the digest, and
# then every start and reload is refused.
mkdir "$work/dev/var-tmp" && chmod 1777 "$work/dev/var-tmp"
check dev
rmdir "$work/dev/var-tmp"
[ $rc != 0 ] && contains "$err" "var-tmp belongs to uid 0 gid 0 with mode 1777: every entry must belong to root and be writable by no one else" \
  && pass "a root with a sticky folder anyone can write is refused" \
  || fail "sticky folder in a root: rc=$rc out=$out err=$err"
chgrp 1 "$work/dev/etc/hosts" && chmod g+w "$work/dev/etc/hosts"
check dev
chgrp 0 "$work/dev/etc/hosts" && chmod g-w "$work/dev/etc/hosts"
[ $rc != 0 ] && contains "$err" "etc/hosts belongs to uid 0 gid 1 with mode 664" \
  && pass "a root with a file another group can write is refused" \
  || fail "group-writable root: rc=$rc out=$out err=$err"
config inside "    rootfs: $dev" "  - tools: [shell]
    paths: [$work/dev/etc]"
check inside
[ $rc != 0 ] && contains "$err" "grant 1 rootfs $dev meets the granted folder $work/dev/etc" \
  && pass "a granted folder inside a grant's root is refused" \
  || fail "root in a grant: rc=$rc out=$out err=$err"

# An image is podman.so's.
config image "    image: localhost/boxmaker-dev@sha256:$hex"
check image
[ $rc != 0 ] && contains "$err" "$work/image.yaml:$gl:12: grant 1 image localhost/boxmaker-dev@sha256:$hex: bwrap.so runs no image" \
  && contains "$err" "podman.so, which takes \"image\"" \
  && pass "a grant's image under bwrap.so: refused, saying which module takes which" \
  || fail "image under bwrap: rc=$rc out=$out err=$err"

[ $failures = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all passed"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run-for-real.sh SCRIPT BROKERD BOXMAKER TOOLKIT RUNTIMEDIR: packaging/run-for-real.sh, run
# for real with every override it documents pointed into a temporary folder (the build
# folder, the demo folder, the socket, home, bwrap's root, the link folder), on the programs
# of this build (--no-build) and with apt-get forbidden (BX_NO_APT=1):
#   - it picks bwrap on this host and says why (or, where bwrap cannot run, says why not);
#   - with BX_BIN_DIR empty it links nothing, and with BX_BIN_DIR set it links only there;
#   - it writes nothing to the default places (/srv/boxmaker-demo, /var/lib/boxmaker,
#     /var/lib/boxmaker-bwrap, /run/boxmaker, /usr/local/bin/boxmaker): /srv, /var/lib and
#     /usr/local/bin are read-only for it, /run/boxmaker must stay as it was;
#   - the config it writes names the socket, home and root it was given;
#   - the commands it prints name the socket, and run as printed against the brokerd it
#     starts, they answer from the demo folder.
# Needs root, bubblewrap and the packages run-for-real.sh asks for (it installs nothing here).
set -u
script=$1 brokerd=$2 boxmaker=$3 toolkit=$4 runtimedir=$5

[ "$(id -u)" = 0 ] || { echo "SKIP: run-for-real.sh runs as root"; exit 77; }
command -v bwrap >/dev/null || { echo "SKIP: bubblewrap is not installed"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: unshare (util-linux) is not installed"; exit 77; }

tmp=$(mktemp -d /tmp/bx-run-for-real.XXXXXX)
chmod 0755 "$tmp" # bubblewrap runs as nobody: it must enter the folders above the root
pid=
cleanup () {
  [ -z "$pid" ] || { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
  rm -rf "$tmp"
}
trap cleanup EXIT
fail () { echo "FAIL: $*"; exit 1; }

# A build folder of this build's programs, as --no-build expects to find them.
build=$tmp/build
mkdir -p "$build/broker" "$build/client" "$build/toolkit" "$build/runtimes/modules"
ln -s "$brokerd" "$build/broker/brokerd"
ln -s "$boxmaker" "$build/client/boxmaker"
ln -s "$toolkit" "$build/toolkit/toolkit"
for m in "$runtimedir"/*; do ln -s "$m" "$build/runtimes/modules/"; done

# The places the defaults name may not be written.  Those whose folder exists are made
# read-only in a mount namespace of the script's own (so a write fails the script, and
# other programs writing there meanwhile cannot disturb this test); the rest must be as
# they were.
guarded="/srv /var/lib /usr/local/bin"
defaults="/srv/boxmaker-demo /var/lib/boxmaker /var/lib/boxmaker-run-for-real /var/lib/boxmaker-bwrap /run/boxmaker /usr/local/bin/boxmaker"
state () {
  for p in /run/boxmaker /srv; do
    if [ -e "$p" ]; then
      printf '%s ' "$p"
      stat -c '%i %Y' "$p"
    else
      echo "$p absent"
    fi
  done
}
before=$(state)

# Always called in a subshell ($(...) or &), which it replaces: a background run's $! is then
# the script's process, and in the end brokerd's.
run () {
  exec unshare -m --propagation private sh -c '
    for d in '"$guarded"'; do
      [ -d "$d" ] || continue
      mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" || exit 1
    done
    exec "$@"' sh \
    env BX_BUILD_DIR="$build" BX_DEMO_DIR="$tmp/demo" BX_SOCKET="$tmp/run/b.sock" \
        BX_HOME="$tmp/home" BX_ROOTFS="$tmp/rootfs" BX_NO_APT=1 "$@"
}

# --no-start, linking nothing.
out=$(BX_BIN_DIR='' run sh "$script" --no-build --no-start 2>&1) \
  || fail "run-for-real.sh --no-start failed:
$out"
printf '%s\n' "$out" | grep -q "^== runtime: bwrap, the faster one" \
  || fail "it did not pick bwrap here:
$(printf '%s\n' "$out" | grep '^== runtime')"
echo "PASS: picks bwrap: $(printf '%s\n' "$out" | grep '^== runtime: ')"
config=$build/run-for-real.yaml
grep -qx "socket: $tmp/run/b.sock" "$config" && grep -qx "home: $tmp/home" "$config" \
  && grep -qx "    rootfs: $tmp/rootfs" "$config" && grep -qx "    paths: \[$tmp/demo\]" "$config" \
  || fail "the config does not name the socket, home, root and demo folder given:
$(cat "$config")"
[ -x "$tmp/rootfs/bin/toolkit" ] || fail "no root built in $tmp/rootfs"
[ -f "$tmp/demo/hello.txt" ] || fail "no $tmp/demo/hello.txt"
echo "PASS: the config names BX_SOCKET, BX_HOME, BX_ROOTFS and BX_DEMO_DIR; the root and demo are there"
printf '%s\n' "$out" | grep -qF "$build/client/boxmaker call read_file '{\"path\": \"$tmp/demo/hello.txt\"}' --socket $tmp/run/b.sock" \
  || fail "the printed commands do not name the build's boxmaker and the socket:
$out"
echo "PASS: with BX_BIN_DIR empty, the printed commands name the build's boxmaker and --socket $tmp/run/b.sock"
after=$(state)
[ "$before" = "$after" ] || fail "the defaults changed:
before: $before
after:  $after"
echo "PASS: nothing written to $defaults"

# Its own home by default, not the packaged service's: purging the boxmaker package removes
# what boxmaker.postrm names, and must not take a home run-for-real.sh made for itself.
default_home=$(sh "$script" --help | sed -n 's/.*BX_HOME .*(default \([^:)]*\).*/\1/p')
purged=$(sed -n '/^  purge)/,/;;/p' "$(dirname "$script")/debian/boxmaker.postrm" \
  | sed -n 's/^ *rm -rf //p' | tr ' ' '\n')
[ -n "$default_home" ] && [ -n "$purged" ] || fail "cannot read the default home ($default_home) or what a purge removes ($purged)"
for p in $purged; do
  case $default_home/ in "$p"/*) fail "the default home $default_home lies in $p, which purging boxmaker removes" ;; esac
done
echo "PASS: the default home $default_home is none of what purging boxmaker removes ($(echo $purged))"

# On cgroup v2 it looks at the v2 controllers.  Here a v2 hierarchy mounted in a mount
# namespace offers none of memory, pids and cpu (the v1 hierarchies hold them), so it must
# say so and pick podman (and then stop: this build folder has no podman.so).
rm -f "$build/runtimes/modules/podman.so"
out=$(unshare -m --propagation private sh -c 'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' sh \
        env BX_BUILD_DIR="$build" BX_DEMO_DIR="$tmp/demo" BX_SOCKET="$tmp/run/b.sock" \
        BX_HOME="$tmp/home" BX_ROOTFS="$tmp/rootfs" BX_NO_APT=1 BX_BIN_DIR='' \
        sh "$script" --no-build --no-start 2>&1)
printf '%s\n' "$out" | grep -q "^== runtime: podman, since this host cannot run bwrap: cgroup v2 offers no memory controller" \
  || fail "on a cgroup v2 hierarchy without controllers it did not say why not bwrap:
$out"
echo "PASS: on cgroup v2 it reads the v2 controllers: $(printf '%s\n' "$out" | grep '^== runtime: ')"

# For real, linking into a folder of the test's own: the printed command answers.
mkdir -p "$tmp/bin"
BX_BIN_DIR="$tmp/bin" run sh "$script" --no-build >"$tmp/out" 2>&1 &
pid=$!
i=0
while [ ! -S "$tmp/run/b.sock" ]; do
  kill -0 "$pid" 2>/dev/null || fail "run-for-real.sh ended:
$(cat "$tmp/out")"
  i=$((i + 1))
  [ $i -lt 3000 ] || fail "brokerd does not listen on $tmp/run/b.sock:
$(cat "$tmp/out")"
  sleep 0.1
done
[ "$(readlink "$tmp/bin/boxmaker")" = "$build/client/boxmaker" ] \
  || fail "$tmp/bin/boxmaker is not a link to the build's boxmaker"
printed=$(grep -F " call read_file " "$tmp/out" | sed 's/^ *//')
case $printed in
  "$tmp/bin/boxmaker call read_file "*"--socket $tmp/run/b.sock") ;;
  *) fail "the printed command is not $tmp/bin/boxmaker ... --socket $tmp/run/b.sock: $printed" ;;
esac
answer=$(sh -c "$printed" 2>&1) || fail "the printed command failed: $printed
$answer
$(cat "$tmp/out")"
printf '%s\n' "$answer" | grep -q "Hello from the boxmaker demo folder." \
  || fail "the printed command did not answer from the demo folder: $answer"
echo "PASS: the printed command, as printed, answers: $answer"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "brokerd exited $rc on SIGTERM:
$(cat "$tmp/out")"
after=$(state)
[ "$before" = "$after" ] || fail "the defaults changed:
before: $before
after:  $after"
echo "PASS: BX_BIN_DIR=$tmp/bin links only there; nothing written to $defaults"

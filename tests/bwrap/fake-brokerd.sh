#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bwrap.so through brokerd against a recording fake bubblewrap (fake-bwrap): the argument
# list of each tool matches its golden file (tests/bwrap/golden/fake_*.argv, with the test's
# folder as @WORK@); every descriptor the list names is open in bubblewrap, a folder for
# each bind and a file for the seccomp filter; bubblewrap runs as nobody; the fake's
# answer reaches the client.  BX_REGENERATE_GOLDEN=1 rewrites the golden files.
#
#   fake-brokerd.sh BROKERD BOXMAKER RUNTIMEDIR FAKE GOLDEN_DIR
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 fake=$4 golden=$5

. "$(dirname "$0")/cgroup-host.sh"
. "$(dirname "$0")/../common/wait_socket.sh"
[ "$(id -u)" = 0 ] && cg_host bwrap-fake
if [ "$(id -u)" != 0 ] || [ -z "$cg_kind" ]; then
  echo "SKIP bwrap.so with a fake bubblewrap: needs root and cgroups (bwrap.so's limits): ${cg_why:-not root}"
  [ "${BX_REQUIRE_BWRAP:-0}" = 1 ] && exit 1
  exit 77
fi
work=$(mktemp -d /tmp/bx-bwrap-fake.XXXXXX)
chmod 0755 "$work"
brokerd_pid=
cleanup () {
  [ -z "$brokerd_pid" ] || kill "$brokerd_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
  cg_cleanup
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }

cp "$fake" "$work/fake-bwrap"
echo "$work/rec" > "$work/fake-bwrap.dir"
mkdir -p "$work/rec" "$work/root/bin" "$work/root/etc" "$work/root/lib" "$work/g1" "$work/g2"
chmod 1777 "$work/rec"
printf '#!/bin/sh\n' > "$work/root/bin/toolkit"
chmod 0755 "$work/root/bin/toolkit"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
runtime:
  module: bwrap
  options:
    bwrap: $work/fake-bwrap
    rootfs: $work/root
    egress_dir: $work/egress
    slots: 2
    $cg_option
grants:
  - tools: [read_file, write_file, shell]
    paths: [$work/g1]
    class: private
  - tools: [shell]
    paths: [$work/g2]
    class: private
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/brokerd.log" &
brokerd_pid=$!
wait_socket "$work/b.sock" $!
[ -S "$work/b.sock" ] || { cat "$work/brokerd.log"; exit 1; }

n=0
check_call () { # tool, arguments, golden name
  out=$("$boxmaker" call "$1" "$2" --socket "$work/b.sock" --session s1 --call "c$n" 2>/dev/null)
  [ "$(printf '%s\n' "$out" | head -n 1)" = "fake output" ] \
    || fail "$1: the fake's answer did not come back: $out"
  got=$(sed "s|$work|@WORK@|g" "$work/rec/$n.argv")
  if [ "${BX_REGENERATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$got" > "$golden/$3"
  fi
  [ "$got" = "$(cat "$golden/$3" 2>/dev/null)" ] && pass "$1: the argument list is $3" \
    || fail "$1: the argument list differs from $3:
$(printf '%s\n' "$got" | diff "$golden/$3" - )"
  fds=$(cat "$work/rec/$n.fds")
  printf '%s\n' "$fds" | grep -q "^uid 65534 gid 65534$" \
    && ! printf '%s\n' "$fds" | grep -Eq "closed|^--bind-fd [0-9]+ file|seccomp [0-9]+ folder" \
    && pass "$1: bubblewrap runs as nobody; every descriptor it is given is open, of the right kind" \
    || fail "$1: descriptors: $fds"
  n=$((n + 1))
}
check_call read_file "{\"path\":\"$work/g1/a.txt\"}" fake_read_file.argv
check_call write_file "{\"path\":\"$work/g1/a.txt\",\"content\":\"x\"}" fake_write_file.argv
check_call shell "{\"command\":\"ls\",\"cwd\":\"$work/g1\"}" fake_shell.argv

# No bubblewrap where the config says: the runtime's sentence, and the log says why.
rm "$work/fake-bwrap"
out=$("$boxmaker" call read_file "{\"path\":\"$work/g1/a.txt\"}" --socket "$work/b.sock" 2>&1)
n=$((n + 1))
case $out in
  *"the tool runner could not start the container"*)
    grep -q "cannot start \"$work/fake-bwrap\": No such file or directory" "$work/brokerd.log" \
      && pass "no bubblewrap: could not start the container; the log says why" \
      || fail "no bubblewrap: the log does not say why" ;;
  *) fail "no bubblewrap: $out" ;;
esac

[ $failures = 0 ] || { cat "$work/brokerd.log"; exit 1; }
echo "all $n calls as expected"

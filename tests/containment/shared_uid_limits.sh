#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One sandbox cannot take the kernel's per-uid counters (/proc/sys/user/*: inotify
# instances, here) from every other: a call of uid A takes all the inotify instances it can
# and holds them, and then a call of uid B can still make one, and so can the host uid
# those counters are charged to (the sandbox uid for bwrap.so; for rootful podman, whose
# user namespaces root makes, root itself).
. "$(dirname "$0")/lib.sh"
not_for gvisor "gVisor's kernel keeps its own inotify instances, keys and namespaces per sandbox: a call never reaches its host uid's counters"

cc -static -O1 -o "$work/ino" "$here/ino.c" 2> "$work/cc.log" \
  || { cat "$work/cc.log"; fail "cannot build the inotify program"; finish; }
writable_folder "$work/w"
cp "$work/ino" "$work/w/ino"
chmod 0755 "$work/w/ino"

start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/w]"

# uid A's call takes and holds every inotify instance it can.
setpriv --reuid=65533 --regid=65533 --clear-groups \
  "$boxmaker" call shell "{\"command\":\"$work/w/ino hold $work/w\"}" --socket "$work/b.sock" \
  --session "$session" --call a1 > "$work/a.out" 2>&1 &
holder=$!
pids="$pids $holder"
t=0
while [ ! -s "$work/w/took" ] && kill -0 $holder 2>/dev/null && [ $t -lt 1200 ]; do
  sleep 0.1
  t=$((t + 1))
done
if [ -s "$work/w/took" ]; then
  echo "uid A's call: $(cat "$work/w/took")"
else
  fail "uid A's call did not take its inotify instances: $(cat "$work/a.out")"
fi

# While it holds them: uid B's call, and the host uid they are charged to.
out=$(setpriv --reuid=65532 --regid=65532 --clear-groups \
        "$boxmaker" call shell "{\"command\":\"$work/w/ino one\"}" --socket "$work/b.sock" \
        --session "$session" --call b1 2>&1)
contains "$out" "inotify: ok" && pass "uid B's call makes an inotify instance ($out)" \
  || fail "uid B's call cannot make an inotify instance while uid A's call holds them: $out"
if [ "$module" = bwrap ]; then
  host=$(setpriv --reuid="$sandbox_uid" --regid="$sandbox_uid" --clear-groups "$work/ino" one)
  who="the sandbox uid $sandbox_uid"
else
  host=$("$work/ino" one)
  who="host root"
fi
contains "$host" "inotify: ok" && pass "$who makes an inotify instance ($host)" \
  || fail "$who cannot make an inotify instance while uid A's call holds them: $host"

touch "$work/w/release"
wait $holder
contains "$(cat "$work/a.out")" "held" || fail "uid A's call did not end well: $(cat "$work/a.out")"
finish

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A process of the host running as the sandboxes' uid owns their user namespaces, so it may
# enter a sandbox's namespaces with every capability there.  What it must not do there is
# undo the call's mounts: unmount a protected path's read-only copy (revealing the host file
# below, writable), or remount a read-only grant writable.  The kernel refuses both for
# mounts it locked, those a user namespace got from a more privileged one; bwrap.so's
# sandboxes made ahead of their calls (pool) had the call's folders mounted into them from
# outside, unlocked: the process entered a waiting sandbox, the call came, and it made the
# read-only grant writable and the protected path go.  It enters every sandbox of the case's
# brokerd while a call runs (or waits in a pooled one before it), and tries both.
. "$(dirname "$0")/lib.sh"
[ "$module" = bwrap ] || not_for "$module" "its sandboxes' user namespaces are not owned by the host uid they run as"

build_probe "$work/probe"
writable_folder "$work/w"
mkdir -p "$work/ro"
echo "read only" > "$work/ro/file.txt"
chmod 0666 "$work/ro/file.txt"
# The protected path: a file the sandbox's uid could write but for its read-only copy.
echo "export SAFE=1" > "$work/w/.profile"
chmod 0666 "$work/w/.profile"

start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/w]
  - tools: [shell]
    paths: [$work/ro]
    writable: false"

# The toolkit processes in this brokerd's slots (a pooled sandbox's waits there already).
toolkits () {
  root=$(module_options | sed -n 's/^ *cgroup_root: //p')
  for procs in ${root:-/sys/fs/cgroup/pids}/boxmaker-bwrap/"$bpid"-*/*/cgroup.procs; do
    [ -e "$procs" ] || continue
    for t in $(cat "$procs"); do
      [ "$(cat "/proc/$t/comm" 2>/dev/null)" = toolkit ] && echo "$t"
    done
  done
}

# attack FOLDER PATH...: a call in FOLDER that waits, while the probe undoes PATH... in
# every sandbox it finds; the probes' reports in $work/undo.*.
attack () {
  folder=$1
  shift
  rm -f "$work"/undo.*
  probes=
  for t in $(toolkits); do
    setpriv --reuid="$sandbox_uid" --regid="$sandbox_uid" --clear-groups \
      "$work/probe" undo "$t" "$@" > "$work/undo.$t" 2>&1 &
    probes="$probes $!"
  done
  ( call b shell "{\"command\":\"sleep 2; cat .profile file.txt 2>/dev/null\",\"cwd\":\"$folder\"}" ) &
  caller=$!
  # A call's own sandbox: entered once it runs.
  t_end=$(( $(date +%s) + 30 ))
  while kill -0 $caller 2>/dev/null && [ "$(date +%s)" -lt $t_end ]; do
    for t in $(toolkits); do
      [ -e "$work/undo.$t" ] && continue
      setpriv --reuid="$sandbox_uid" --regid="$sandbox_uid" --clear-groups \
        "$work/probe" undo "$t" "$@" > "$work/undo.$t" 2>&1 &
      probes="$probes $!"
    done
    sleep 0.05
  done
  wait $caller
  # A probe still waiting is in a sandbox made ahead that no call took: nothing to undo.
  sleep 1
  for p in $probes; do kill "$p" 2>/dev/null; done
  for p in $probes; do wait "$p" 2>/dev/null; done
  n=$((n + 1))
}

attack "$work/w" "$work/w/.profile"
entered=$(cat "$work"/undo.* 2>/dev/null | grep -c "^enter=ok")
echo "writable grant: $(cat "$work"/undo.* 2>/dev/null | sort | uniq -c | tr '\n' ' ')"
[ "$entered" -gt 0 ] || fail "the probe entered no sandbox of the call"
if cat "$work"/undo.* | grep -qE "^(umount|remount)_1=ok"; then
  fail "a protected path's copy was unmounted or made writable"
else
  pass "no process of the sandbox's uid unmounts or remounts a protected path ($entered sandboxes entered)"
fi
[ "$(cat "$work/w/.profile")" = "export SAFE=1" ] || fail "the protected .profile was written"

attack "$work/ro" "$work/ro"
entered=$(cat "$work"/undo.* 2>/dev/null | grep -c "^enter=ok")
echo "read-only grant: $(cat "$work"/undo.* 2>/dev/null | sort | uniq -c | tr '\n' ' ')"
[ "$entered" -gt 0 ] || fail "the probe entered no sandbox of the call"
if cat "$work"/undo.* | grep -qE "^remount_1=ok"; then
  fail "a read-only grant was remounted writable"
else
  pass "no process of the sandbox's uid remounts a read-only grant writable ($entered sandboxes entered)"
fi
[ "$(cat "$work/ro/file.txt")" = "read only" ] || fail "the read-only grant's file was written"

# A sandbox made ahead, its root covered before the call by a tmpfs holding a file where the
# grant's is: the call's folder must still be mounted where the tool looks, under the root
# its processes have, not on the cover (the mounter followed the namespace's root to it).
echo "the host's file" > "$work/w/f.txt"
chmod 0666 "$work/w/f.txt"
covered=0
for t in $(toolkits); do
  setpriv --reuid="$sandbox_uid" --regid="$sandbox_uid" --clear-groups \
    "$work/probe" overmount "$t" "$work/w/f.txt" "planted by the cover" > "$work/over.$t" 2>&1
  grep -q "^overmount=ok" "$work/over.$t" && covered=$((covered + 1))
done
call b shell "{\"command\":\"cat f.txt; echo written > out.txt\",\"cwd\":\"$work/w\"}"
echo "sandboxes covered before the call: $covered"
contains "$out" "the host's file" && [ "$(cat "$work/w/out.txt" 2>/dev/null)" = written ] \
  && pass "the call's folder is where its tool looks, whatever covers the sandbox's root" \
  || fail "the call did not see its folder: rc=$rc out=$out err=$err"
finish

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hole 6: CPU, memory, processes and disk.  Spinning loops get one CPU (the `cpus` default);
# a grant's memory and pids limits are what the call's cgroup holds (cgroup v1 or v2 files)
# and hold: a shell past the memory limit is stopped (bwrap.so: with the fixed sentence), one
# past the pids limit cannot fork; a file past the file size limit stops at the limit, with
# the fixed sentence for write_file.
. "$(dirname "$0")/lib.sh"

writable_folder "$work/w"
start_brokerd b "" "    file_size: 512k" "  - tools: [shell, write_file]
    paths: [$work/w]"
# The loops' CPU time is measured against the time the shell took from before it started
# them to after it read their use (/proc/uptime, in hundredths, read without a fork): a slow
# machine (an emulated one) stretches that window past the 3 s of sleep.
clock0='read u0 _ < /proc/uptime'
clock1='read u1 _ < /proc/uptime'
wall='wall=$(( (${u1%.*}${u1#*.} - ${u0%.*}${u0#*.}) * 10 ))'
if [ "$module" = podman ]; then
  # The container's own cgroup, in nanoseconds: cpuacct.usage on cgroup v1, usage_usec of
  # cpu.stat on cgroup v2 (podman gives the container a cgroup namespace there).
  u="u () { if [ -r /sys/fs/cgroup/cpu.stat ]; then while read k v; do [ \$k = usage_usec ] && echo \$((v * 1000)); done < /sys/fs/cgroup/cpu.stat; else cat /sys/fs/cgroup/cpuacct/cpuacct.usage; fi; }"
  call b shell "{\"command\":\"$u; $clock0; a=\$(u); for i in 1 2 3 4; do (while :; do :; done) & done; sleep 3; b=\$(u); $clock1; kill \$(jobs -p); [ -n \\\"\$a\\\" ] && [ -n \\\"\$b\\\" ] && echo used=\$(( (b - a) / 1000000 )) $wall\"}"
elif [ "$module" = gvisor ]; then
  echo "skipped for gvisor.so: the loops' CPU time (gVisor's kernel counts the time its tasks are meant to run, throttled or not; the conformance kit measures the work done, tests/gvisor/conformance.sh)"
  out="used=300 wall=3000"
else
  # No /sys inside: the loops' own CPU time, user and system, in ticks of 10 ms.
  call b shell "{\"command\":\"$clock0; for i in 1 2 3 4; do (while :; do :; done) & done; sleep 3; t=0; for p in \$(jobs -p); do set -- \$(cat /proc/\$p/stat) || exit 1; t=\$((t + \${14} + \${15})); done; $clock1; kill \$(jobs -p); echo used=\$((t * 10)) $wall\"}"
fi
used=$(printf '%s\n' "$out" | sed -n 's/^used=\([0-9]*\) wall=.*/\1/p')
took=$(printf '%s\n' "$out" | sed -n 's/^used=[0-9]* wall=\([0-9]*\)$/\1/p')
# One CPU at most: the loops' time within the window, a fifth over for the quota's periods.
if [ -z "$used" ] || [ -z "$took" ] || [ "$used" -lt 300 ] || [ "$took" -lt 3000 ]; then
  fail "cannot measure CPU use inside (used=$used wall=$took): rc=$rc out=$out err=$err"
elif [ "$used" -le $(( took + took / 5 )) ]; then
  pass "four spinning loops for 3 s used $used ms of CPU in $took ms (one CPU at most)"
else
  fail "four spinning loops used $used ms of CPU in $took ms: more than one CPU"
fi

# Memory and processes, as a grant's limits.
start_brokerd mem "" "" "  - tools: [shell]
    paths: [$work/w]
    limits: {memory: 32m, pids: 16}"
mem_pid=$bpid
if [ "$module" = podman ]; then
  # The container's own view of its cgroup (v2 memory.max, or v1's file).
  call mem shell '{"command":"cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max"}'
  held=$(printf '%s\n' "$out" | tr '\n' ' ')
  case $held in "33554432 16 "*) pass "the container's cgroup holds memory 32m and pids 16" ;;
    *) fail "the container's cgroup holds: $held (rc=$rc err=$err)" ;; esac
elif [ "$module" = gvisor ]; then
  # gvisor.so: memory in the sandbox's cgroup, made and removed by runsc; processes as
  # RLIMIT_NPROC, which gVisor's kernel enforces: seen from inside.
  call mem shell '{"command":"ulimit -u"}'
  contains "$out" "16" && pass "the sandbox's process limit is 16" || fail "pids limit: $out $err"
else
  # No /sys inside: the slot's files on the host, while a call runs in it (after the call,
  # a sandbox made ahead may take the slot with the options' limits).  v2: memory.max and
  # memory.swap.max 0; v1: the memory hierarchy.
  ( call mem shell '{"command":"sleep 5"}' ) &
  caller=$!
  root=$(module_options | sed -n 's/^ *cgroup_root: //p')
  held=
  t=$(( $(date +%s) + 30 ))
  while [ -z "$held" ] && [ "$(date +%s)" -lt $t ] && kill -0 $caller 2>/dev/null; do
    for slot in ${root:-/sys/fs/cgroup/memory}/boxmaker-bwrap/"$mem_pid"-*/*/; do
      if [ -e "$slot/memory.max" ]; then
        seen="$(cat "$slot/memory.max") $(cat "$slot/memory.swap.max" 2>/dev/null || echo 0) $(cat "$slot/pids.max")"
      else
        seen="$(cat "$slot/memory.limit_in_bytes") 0 $(cat "/sys/fs/cgroup/pids/${slot#/sys/fs/cgroup/memory/}pids.max")"
      fi
      [ "$seen" = "33554432 0 17" ] && held=1
    done
    sleep 0.1
  done
  wait $caller
  n=$((n + 1))
  [ -n "$held" ] && pass "the call's slot holds memory 32m, no swap, pids 16 and its keeper" \
    || fail "no slot of brokerd $mem_pid held the grant's limits while its call ran"
fi
call mem shell '{"command":"x=$(head -c 60000000 /dev/zero | tr \\\\0 a); echo ${#x}"}'
if [ "$out" = 60000000 ]; then
  fail "60 MB held under a memory limit of 32m"
elif [ "$module" = bwrap ] || [ "$module" = gvisor ]; then
  [ $rc = 1 ] && contains "$err" "the tool was stopped: it ran out of memory or was killed" \
    && pass "over the memory limit: stopped with the fixed sentence" \
    || fail "memory: rc=$rc out=$out err=$err"
else
  pass "over the memory limit: not held (rc=$rc, $(printf '%s' "$out$err" | head -c 100))"
fi
call mem shell '{"command":"for i in $(seq 40); do sleep 1 & done; echo spawned"}'
contains "$out" "fork" && pass "over the pids limit: $(printf '%s' "$out" | head -n 1)" \
  || fail "pids: rc=$rc out=$out err=$err"

call b shell "{\"command\":\"head -c 3000000 /dev/zero > big; echo head=\$?; fallocate -l 5G huge; echo fallocate=\$?\",\"cwd\":\"$work/w\"}"
size=$(stat -c %s "$work/w/big" 2>/dev/null || echo 0)
hsize=$(stat -c %s "$work/w/huge" 2>/dev/null || echo 0)
# podman.so's sentence (docs/config.md); another runtime's shell may report EFBIG instead.
sentence_ok () {
  [ "$module" != podman ] || { contains "$out" "File size limit exceeded" && contains "$out" "head=153"; }
}
[ "$size" -le 524288 ] && [ "$hsize" -le 524288 ] && sentence_ok \
  && pass "files stop at the 512 KiB limit (big $size, huge $hsize bytes; $(echo $out | tr '\n' ' '))" \
  || fail "files past the limit: big $size, huge $hsize bytes; out=$out"

# write_file past a smaller limit (its content travels as one argument here).  A time limit
# out of reach: under emulation (the VM lane) the sandbox's start alone can take seconds.
start_brokerd small "" "    file_size: 64k
    write_file_ms: 120000" "  - tools: [write_file]
    paths: [$work/w]"
content=$(head -c 100000 /dev/zero | tr '\0' a)
call small write_file "{\"path\":\"$work/w/wf\",\"content\":\"$content\"}"
wsize=$(stat -c %s "$work/w/wf" 2>/dev/null || echo 0)
echo "write_file answered: rc=$rc out=$out"
[ "$wsize" -eq 65536 ] \
  && contains "$out$err" "file too large" \
  && pass "write_file past the limit: the fixed sentence ($wsize bytes on disk)" \
  || fail "write_file past the limit: rc=$rc size=$wsize err=$err"
finish

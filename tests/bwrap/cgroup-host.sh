# shellcheck shell=sh disable=SC2034
# SPDX-License-Identifier: Apache-2.0
# Sourced by bwrap.so's tests: the kind of cgroups the host has, and where a test's brokerds
# put their slots.  After `cg_host NAME`:
#   cg_kind    v1 or v2, empty when neither can hold bwrap.so's limits ($cg_why says why)
#   cg_option  the module option that gives the test's brokerds a cgroup v2 subtree of the
#              test's own (its shell shares its own cgroup with other processes, so a
#              brokerd could not hand that one's controllers to its slots), empty on v1
#   cg_slots   the folder of the brokerds' instance folders, <pid>-<start>/<slot>, in which
#              cgroup.procs lists a slot's tasks
# cg_limit SLOT_FOLDER WHAT prints the memory, swap, pids or cpu limit of a slot as the
# host's files hold it; cg_cleanup removes the test's subtree.
cg_host () {
  cg_kind='' cg_option='' cg_slots='' cg_sub='' cg_why=''
  if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
    for c in memory pids cpu; do
      grep -qw "$c" /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null \
        || { cg_why="cgroup v2 without the $c controller enabled at its root"; return; }
    done
    cg_sub=/sys/fs/cgroup/bx-$1.$$
    mkdir "$cg_sub" 2>/dev/null || { cg_why="cannot make $cg_sub"; cg_sub=; return; }
    cg_kind=v2 cg_option="cgroup_root: $cg_sub" cg_slots=$cg_sub/boxmaker-bwrap
  elif [ -e /sys/fs/cgroup/memory/cgroup.procs ]; then
    cg_kind=v1 cg_slots=/sys/fs/cgroup/pids/boxmaker-bwrap
  else
    cg_why="no cgroup v1 memory hierarchy and no cgroup v2 at /sys/fs/cgroup"
  fi
}
cg_limit () {
  if [ "$cg_kind" = v2 ]; then
    case $2 in
      memory) cat "$1/memory.max" ;;
      swap) cat "$1/memory.swap.max" 2>/dev/null || echo none ;;
      pids) cat "$1/pids.max" ;;
      cpu) cat "$1/cpu.max" ;;
    esac
  else
    slot=${1#/sys/fs/cgroup/pids/}
    case $2 in
      memory) cat "/sys/fs/cgroup/memory/$slot/memory.limit_in_bytes" ;;
      swap) cat "/sys/fs/cgroup/memory/$slot/memory.memsw.limit_in_bytes" 2>/dev/null || echo none ;;
      pids) cat "$1/pids.max" ;;
      cpu) echo "$(cat "/sys/fs/cgroup/cpu/$slot/cpu.cfs_quota_us") $(cat "/sys/fs/cgroup/cpu/$slot/cpu.cfs_period_us")" ;;
    esac
  fi
}
cg_cleanup () {
  [ -n "$cg_sub" ] || return 0
  # Deepest first; a slot whose tasks are still going away is tried again.
  for i in 1 2 3 4 5; do
    find "$cg_sub" -depth -type d -exec rmdir {} \; 2>/dev/null
    [ -d "$cg_sub" ] || return 0
    sleep 0.2
  done
}

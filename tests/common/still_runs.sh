# SPDX-License-Identifier: Apache-2.0
# still_runs TID: whether the task TID still runs code of its own, that is whether a thread
# of it is not in the kernel's exit (PF_EXITING, 0x4, in the flags of /proc/TID/stat).
# bwrap.so answers a call once every task of it is gone, but bubblewrap's own process, which
# may still be in its exit: the kernel may still be tearing down the sandbox's namespaces and
# mounts, and it stays listed in the slot's cgroup until that is done.  Sourced by the
# scripts that look for what a call left.
still_runs () {
  for stat in /proc/"$1"/task/*/stat; do
    flags=$(sed 's/.*) //' "$stat" 2> /dev/null | cut -d' ' -f7)
    [ -n "$flags" ] || continue
    [ $((flags & 4)) -ne 0 ] || return 0
  done
  return 1
}

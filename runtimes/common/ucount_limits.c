/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's per-uid limits of /proc/sys/user and a sandbox's share (ucount_limits.h). */
#include <stdio.h>

#include "ucount_limits.h"

const char *const bx_ucount_sysctls[BX_UCOUNT_SYSCTLS] = {
  "/proc/sys/user/max_inotify_instances", "/proc/sys/user/max_inotify_watches",
  "/proc/sys/user/max_fanotify_groups",   "/proc/sys/user/max_fanotify_marks",
  "/proc/sys/user/max_user_namespaces",   "/proc/sys/user/max_mnt_namespaces",
  "/proc/sys/user/max_pid_namespaces",    "/proc/sys/user/max_net_namespaces",
  "/proc/sys/user/max_ipc_namespaces",    "/proc/sys/user/max_uts_namespaces",
  "/proc/sys/user/max_cgroup_namespaces", "/proc/sys/user/max_time_namespaces",
};
/* The first namespace limit: bubblewrap itself makes a few of each kind in the sandbox's
 * namespace (two user namespaces for --disable-userns, one of every other kind), and an OCI
 * runtime one of every kind but user. */
#define FIRST_NAMESPACES 4
#define MIN_NAMESPACES   8

static uint64_t
read_number (const char *path)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return 0;
  unsigned long long v = 0;
  if (fscanf (f, "%llu", &v) != 1)
    v = 0;
  fclose (f);
  return v;
}

void
bx_ucount_sysctl_shares (uint64_t sandboxes, uint64_t share[BX_UCOUNT_SYSCTLS])
{
  uint64_t parts = sandboxes + 1;
  for (int i = 0; i < BX_UCOUNT_SYSCTLS; i++)
    {
      uint64_t host = read_number (bx_ucount_sysctls[i]);
      uint64_t s = host / parts;
      uint64_t floor = i >= FIRST_NAMESPACES ? MIN_NAMESPACES : 1;
      if (host != 0 && s < floor)
        s = floor;
      share[i] = host != 0 ? s : 0;
    }
}

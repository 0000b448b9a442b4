/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup v1 backend (Debian 12's hybrid layout: one hierarchy per controller under
 * /sys/fs/cgroup, or under the cgroup_root option).  A slot is three folders, one in each
 * of the memory, pids and cpu hierarchies:
 *
 *   <root>/<controller>/boxmaker-bwrap/<brokerd pid>-<its start time>/<slot>
 *
 * Moving a process into a v1 hierarchy waits for an RCU grace period (see bwrap_keeper.c), and
 * there is no way to be born in a cgroup: the keeper is forked and moves itself in. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "bwrap.h"

#define TOP "boxmaker-bwrap"
static const char *const controllers[BX_BWRAP_CGROUP_DIRS] = { "memory", "pids", "cpu" };
enum
{
  MEMORY,
  PIDS,
  CPU
};

static int
locate (const char *root, char **tops, bx_error *err)
{
  if (root == NULL)
    root = "/sys/fs/cgroup";
  for (int c = 0; c < BX_BWRAP_CGROUP_DIRS; c++)
    {
      /* A v1 hierarchy of that controller: cgroup v2 has no per-controller folders. */
      cleanup_free char *probe = bx_xasprintf ("%s/%s/cgroup.procs", root, controllers[c]);
      if (access (probe, F_OK) < 0)
        return bx_error_setc (err, 0,
                              "no cgroup v1 %s hierarchy at %s/%s (this module needs the "
                              "memory, pids and cpu controllers, of cgroup v1 or v2)",
                              controllers[c], root, controllers[c]);
      tops[c] = bx_xasprintf ("%s/%s/" TOP, root, controllers[c]);
      if (mkdir (tops[c], 0755) < 0 && errno != EEXIST)
        return bx_error_set (err, errno, "cannot make cgroups under %s/%s", root, controllers[c]);
    }
  return 0;
}

static int
ready (const char *dir, bx_error *err)
{
  (void)dir;
  (void)err;
  return 0;
}

/* Memory and swap: with swap accounting, swap counts too (the limit is on memory the call
 * holds, not on what it may push to disk), and cgroup v1 refuses a memory limit above the
 * memory and swap limit, so a limit that grows is written to memsw first and one that
 * shrinks to memory first. */
static int
write_limits (char *const *slot, const struct bx_bwrap_limits *was,
              const struct bx_bwrap_limits *limits, bool force, bx_error *err)
{
  if (force || limits->memory != was->memory)
    {
      cleanup_free char *memory = bx_xasprintf ("%llu", (unsigned long long)limits->memory);
      static const char *const files[2]
          = { "memory.limit_in_bytes", "memory.memsw.limit_in_bytes" };
      cleanup_free char *memsw = bx_xasprintf ("%s/%s", slot[MEMORY], files[1]);
      int first = limits->memory > was->memory && !force ? 1 : 0;
      if (access (memsw, F_OK) < 0)
        {
          if (bx_bwrap_cgroup_set (slot[MEMORY], files[0], memory, err) < 0)
            return -1;
        }
      else if (bx_bwrap_cgroup_set (slot[MEMORY], files[first], memory, err) < 0
               || bx_bwrap_cgroup_set (slot[MEMORY], files[1 - first], memory, err) < 0)
        {
          /* The files held something else than we thought: the other order. */
          bx_error_free (err);
          if (bx_bwrap_cgroup_set (slot[MEMORY], files[1 - first], memory, err) < 0
              || bx_bwrap_cgroup_set (slot[MEMORY], files[first], memory, err) < 0)
            return -1;
        }
    }
  if (force || limits->pids != was->pids)
    {
      /* The keeper counts as one task of the slot. */
      cleanup_free char *pids = bx_xasprintf ("%lld", (long long)limits->pids + 1);
      if (bx_bwrap_cgroup_set (slot[PIDS], "pids.max", pids, err) < 0)
        return -1;
    }
  if (force || limits->cpu_millis != was->cpu_millis)
    {
      long long quota, period;
      bx_bwrap_cgroup_cpu_quota (limits->cpu_millis, &quota, &period);
      cleanup_free char *p = bx_xasprintf ("%lld", period);
      cleanup_free char *q = bx_xasprintf ("%lld", quota);
      /* Quota off first: a period shorter than the quota would be refused. */
      if (bx_bwrap_cgroup_set (slot[CPU], "cpu.cfs_quota_us", "-1", err) < 0
          || bx_bwrap_cgroup_set (slot[CPU], "cpu.cfs_period_us", p, err) < 0
          || bx_bwrap_cgroup_set (slot[CPU], "cpu.cfs_quota_us", q, err) < 0)
        return -1;
    }
  return 0;
}

static uint64_t
oom_kills (char *const *slot)
{
  cleanup_free char *path = bx_xasprintf ("%s/memory.oom_control", slot[MEMORY]);
  return bx_bwrap_cgroup_oom_kill_count (path);
}

static void
leave (char *const *tops)
{
  /* boxmaker-bwrap stays in each hierarchy: another brokerd may be making its folder
   * there at this very moment. */
  (void)tops;
}

const struct bx_bwrap_cgroup_backend bx_bwrap_cgroup_v1 = {
  .what = "cgroup v1",
  .dirs = BX_BWRAP_CGROUP_DIRS,
  .tasks = PIDS,
  .threads = "tasks",
  .born_in = false,
  .locate = locate,
  .ready = ready,
  .write_limits = write_limits,
  .oom_kills = oom_kills,
  .leave = leave,
};

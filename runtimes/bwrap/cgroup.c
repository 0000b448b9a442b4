/* SPDX-License-Identifier: Apache-2.0 */
/* Per-call cgroups, cgroup v1 (Debian 12's hybrid layout: one hierarchy per controller
 * under /sys/fs/cgroup).  Everything cgroup-specific is in this file, behind the small
 * interface in bwrap.h, so a cgroup v2 backend (placing the process at clone time with
 * CLONE_INTO_CGROUP) can take its place.
 *
 * Making a memory cgroup costs milliseconds, and moving a process into one as much again
 * (see keeper.c), so the slots are made once, at start, with their limits set, each with
 * a keeper process inside that forks the slot's sandboxes; a call borrows a slot and
 * empties it (every task but the keeper killed) when it ends.
 * The layout, in each of the memory, pids and cpu hierarchies:
 *
 *   <controller>/boxmaker-bwrap/<brokerd pid>-<its start time>/<slot>
 *
 * The start time tells a dead brokerd's leftovers (swept) from a live one's (never
 * touched), even when a pid is reused. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "bwrap.h"

#define TOP             "boxmaker-bwrap"
#define CFS_PERIOD      100000
#define KILL_MS         2000
#define ACQUIRE_TICK_MS 50
#define CONTROLLERS     3
static const char *const controllers[CONTROLLERS] = { "memory", "pids", "cpu" };
enum
{
  MEMORY,
  PIDS,
  CPU
};

struct bx_bwrap_cgroups
{
  char *root;
  char *name;
  size_t slots;
  int *procs;  /* slots * CONTROLLERS descriptors of cgroup.procs, open for writing */
  int *keeper; /* each slot's keeper socket */
  pid_t *keeper_pid;
  struct bx_bwrap_limits *set; /* each slot's limits as last written */
  bool has_memsw;              /* swap accounting: memory.memsw.limit_in_bytes exists */
  bool *busy;
  pthread_mutex_t lock;
  pthread_cond_t freed;
};

static char *
slot_path (const struct bx_bwrap_cgroups *cg, int controller, size_t slot, const char *file)
{
  return bx_xasprintf ("%s/%s/" TOP "/%s/%zu%s%s", cg->root, controllers[controller], cg->name,
                       slot, file ? "/" : "", file ? file : "");
}

static int
write_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t w = write (fd, text, strlen (text));
  int saved = errno;
  close (fd);
  errno = saved;
  return w == (ssize_t)strlen (text) ? 0 : -1;
}

static int
set_limit (const struct bx_bwrap_cgroups *cg, int controller, size_t slot, const char *file,
           const char *value, char **why)
{
  cleanup_free char *path = slot_path (cg, controller, slot, file);
  if (write_file (path, value) == 0)
    return 0;
  *why = bx_xasprintf ("cannot write %s to %s: %s", value, path, strerror (errno));
  return -1;
}

/* Writes LIMITS into SLOT's files (FORCE: every file, else those that change).  Memory and
 * swap: cgroup v1 refuses a memory limit above the memory and swap limit, so a limit that
 * grows is written to memsw first and one that shrinks to memory first.  The CPU quota is
 * at least 1 ms a period, so a small share takes a longer period (at most 1 s) rather than
 * being rounded up. */
static int
write_limits (struct bx_bwrap_cgroups *cg, size_t slot, const struct bx_bwrap_limits *limits,
              bool force, char **why)
{
  struct bx_bwrap_limits *was = &cg->set[slot];
  if (force || limits->memory != was->memory)
    {
      cleanup_free char *memory = bx_xasprintf ("%llu", (unsigned long long)limits->memory);
      static const char *const files[2]
          = { "memory.limit_in_bytes", "memory.memsw.limit_in_bytes" };
      int first = limits->memory > was->memory && !force ? 1 : 0;
      if (!cg->has_memsw)
        {
          if (set_limit (cg, MEMORY, slot, files[0], memory, why) < 0)
            return -1;
        }
      else if (set_limit (cg, MEMORY, slot, files[first], memory, why) < 0
               || set_limit (cg, MEMORY, slot, files[1 - first], memory, why) < 0)
        {
          /* The files held something else than we thought: the other order. */
          free (*why);
          *why = NULL;
          if (set_limit (cg, MEMORY, slot, files[1 - first], memory, why) < 0
              || set_limit (cg, MEMORY, slot, files[first], memory, why) < 0)
            return -1;
        }
      was->memory = limits->memory;
    }
  if (force || limits->pids != was->pids)
    {
      /* The keeper counts as one task of the slot. */
      cleanup_free char *pids = bx_xasprintf ("%lld", (long long)limits->pids + 1);
      if (set_limit (cg, PIDS, slot, "pids.max", pids, why) < 0)
        return -1;
      was->pids = limits->pids;
    }
  if (force || limits->cpu_millis != was->cpu_millis)
    {
      long long period = CFS_PERIOD;
      long long quota = (long long)limits->cpu_millis * period / 1000;
      if (quota < 1000)
        {
          period = 1000000;
          quota = (long long)limits->cpu_millis * period / 1000;
          if (quota < 1000)
            quota = 1000;
        }
      cleanup_free char *p = bx_xasprintf ("%lld", period);
      cleanup_free char *q = bx_xasprintf ("%lld", quota);
      /* Quota off first: a period shorter than the quota would be refused. */
      if (set_limit (cg, CPU, slot, "cpu.cfs_quota_us", "-1", why) < 0
          || set_limit (cg, CPU, slot, "cpu.cfs_period_us", p, why) < 0
          || set_limit (cg, CPU, slot, "cpu.cfs_quota_us", q, why) < 0)
        return -1;
      was->cpu_millis = limits->cpu_millis;
    }
  return 0;
}

int
bx_bwrap_cgroups_limit (struct bx_bwrap_cgroups *cg, size_t slot,
                        const struct bx_bwrap_limits *limits)
{
  cleanup_free char *why = NULL;
  if (write_limits (cg, slot, limits, false, &why) == 0)
    return 0;
  /* What was written is unknown now: the next call writes every file again. */
  int saved = errno;
  memset (&cg->set[slot], 0, sizeof cg->set[slot]);
  errno = saved;
  return -1;
}

static int
make_slot (struct bx_bwrap_cgroups *cg, size_t slot, const struct bx_bwrap_limits *limits,
           char **why)
{
  for (int c = 0; c < CONTROLLERS; c++)
    {
      cleanup_free char *dir = slot_path (cg, c, slot, NULL);
      if (mkdir (dir, 0700) < 0 && errno != EEXIST)
        {
          *why = bx_xasprintf ("cannot make %s: %s", dir, strerror (errno));
          return -1;
        }
    }
  /* With swap accounting, swap counts too: the limit is on memory the call holds, not on
   * what it may push to disk. */
  cleanup_free char *memsw = slot_path (cg, MEMORY, slot, "memory.memsw.limit_in_bytes");
  cg->has_memsw = access (memsw, F_OK) == 0;
  if (write_limits (cg, slot, limits, true, why) < 0)
    return -1;
  for (int c = 0; c < CONTROLLERS; c++)
    {
      cleanup_free char *procs = slot_path (cg, c, slot, "cgroup.procs");
      int fd = open (procs, O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        {
          *why = bx_xasprintf ("cannot open %s: %s", procs, strerror (errno));
          return -1;
        }
      cg->procs[slot * CONTROLLERS + c] = fd;
    }
  cg->keeper[slot]
      = bx_bwrap_keeper_start (cg->procs + slot * CONTROLLERS, CONTROLLERS, &cg->keeper_pid[slot]);
  if (cg->keeper[slot] < 0)
    {
      *why = bx_xasprintf ("cannot start the keeper of slot %zu: %s", slot, strerror (errno));
      return -1;
    }
  return 0;
}

/* Kills every task listed in the cgroup folder DIR but SPARE until none is left (a task
 * may fork while the list is read, hence the loop).  A sandbox that has just ended stays
 * listed for a moment, until its keeper's kernel-side reaping is done: the waits start
 * short and grow. */
static void
kill_all_in (const char *dir, pid_t spare)
{
  cleanup_free char *procs = bx_xasprintf ("%s/cgroup.procs", dir);
  long wait_ns = 50 * 1000;
  for (int64_t until = bx_now_ms () + KILL_MS;;)
    {
      FILE *f = fopen (procs, "re");
      if (f == NULL)
        return;
      long pid;
      int found = 0;
      while (fscanf (f, "%ld", &pid) == 1)
        {
          if ((pid_t)pid == spare)
            continue;
          kill ((pid_t)pid, SIGKILL);
          found++;
        }
      fclose (f);
      if (found == 0 || bx_now_ms () >= until)
        return;
      struct timespec tick = { 0, wait_ns };
      nanosleep (&tick, NULL);
      if (wait_ns < 10 * 1000 * 1000)
        wait_ns *= 2;
    }
}

int
bx_bwrap_cgroups_open (const char *root, const char *name, size_t slots,
                       const struct bx_bwrap_limits *limits, struct bx_bwrap_cgroups **out,
                       char **why)
{
  for (int c = 0; c < CONTROLLERS; c++)
    {
      /* A v1 hierarchy of that controller: cgroup v2 has no per-controller folders. */
      cleanup_free char *probe = bx_xasprintf ("%s/%s/cgroup.procs", root, controllers[c]);
      if (access (probe, F_OK) < 0)
        {
          *why = bx_xasprintf ("no cgroup v1 %s hierarchy at %s/%s (this module needs cgroup "
                               "v1 memory, pids and cpu controllers)",
                               controllers[c], root, controllers[c]);
          return -1;
        }
      cleanup_free char *top = bx_xasprintf ("%s/%s/" TOP, root, controllers[c]);
      cleanup_free char *mine = bx_xasprintf ("%s/%s", top, name);
      if ((mkdir (top, 0755) < 0 && errno != EEXIST) || (mkdir (mine, 0700) < 0 && errno != EEXIST))
        {
          *why = bx_xasprintf ("cannot make cgroups under %s/%s: %s", root, controllers[c],
                               strerror (errno));
          return -1;
        }
    }

  struct bx_bwrap_cgroups *cg = bx_xzalloc (sizeof *cg);
  cg->root = bx_xstrdup (root);
  cg->name = bx_xstrdup (name);
  cg->slots = slots;
  cg->procs = bx_xmalloc (slots * CONTROLLERS * sizeof (int));
  for (size_t i = 0; i < slots * CONTROLLERS; i++)
    cg->procs[i] = -1;
  cg->busy = bx_xzalloc (slots * sizeof (bool));
  cg->keeper = bx_xmalloc (slots * sizeof (int));
  cg->keeper_pid = bx_xzalloc (slots * sizeof (pid_t));
  cg->set = bx_xzalloc (slots * sizeof *cg->set);
  for (size_t s = 0; s < slots; s++)
    cg->keeper[s] = -1;
  pthread_mutex_init (&cg->lock, NULL);
  pthread_cond_init (&cg->freed, NULL);
  for (size_t s = 0; s < slots; s++)
    if (make_slot (cg, s, limits, why) < 0)
      {
        bx_bwrap_cgroups_close (cg);
        return -1;
      }
  *out = cg;
  return 0;
}

size_t
bx_bwrap_cgroups_acquire (struct bx_bwrap_cgroups *cg, bool (*stop) (const void *), const void *arg)
{
  pthread_mutex_lock (&cg->lock);
  for (;;)
    {
      for (size_t s = 0; s < cg->slots; s++)
        if (!cg->busy[s])
          {
            cg->busy[s] = true;
            pthread_mutex_unlock (&cg->lock);
            return s;
          }
      /* Woken when a slot is freed, and every ACQUIRE_TICK_MS to ask STOP. */
      if (stop (arg))
        {
          pthread_mutex_unlock (&cg->lock);
          return SIZE_MAX;
        }
      struct timespec until;
      clock_gettime (CLOCK_REALTIME, &until);
      until.tv_nsec += ACQUIRE_TICK_MS * 1000000L;
      if (until.tv_nsec >= 1000000000L)
        {
          until.tv_sec++;
          until.tv_nsec -= 1000000000L;
        }
      pthread_cond_timedwait (&cg->freed, &cg->lock, &until);
    }
}

int
bx_bwrap_cgroups_keeper (struct bx_bwrap_cgroups *cg, size_t slot)
{
  return cg->keeper[slot];
}

/* Ends SLOT's keeper, if it still runs, and waits for it. */
static void
end_keeper (struct bx_bwrap_cgroups *cg, size_t slot)
{
  if (cg->keeper[slot] < 0)
    return;
  close (cg->keeper[slot]);
  cg->keeper[slot] = -1;
  kill (cg->keeper_pid[slot], SIGKILL);
  while (waitpid (cg->keeper_pid[slot], NULL, 0) < 0 && errno == EINTR)
    ;
}

int
bx_bwrap_cgroups_revive (struct bx_bwrap_cgroups *cg, size_t slot)
{
  end_keeper (cg, slot);
  cg->keeper[slot]
      = bx_bwrap_keeper_start (cg->procs + slot * CONTROLLERS, CONTROLLERS, &cg->keeper_pid[slot]);
  return cg->keeper[slot] < 0 ? -1 : 0;
}

uint64_t
bx_bwrap_cgroups_oom_kills (struct bx_bwrap_cgroups *cg, size_t slot)
{
  cleanup_free char *path = slot_path (cg, MEMORY, slot, "memory.oom_control");
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return 0;
  char key[64];
  unsigned long long value, kills = 0;
  while (fscanf (f, "%63s %llu", key, &value) == 2)
    if (strcmp (key, "oom_kill") == 0)
      kills = value;
  fclose (f);
  return kills;
}

void
bx_bwrap_cgroups_kill (struct bx_bwrap_cgroups *cg, size_t slot)
{
  cleanup_free char *dir = slot_path (cg, PIDS, slot, NULL);
  kill_all_in (dir, cg->keeper_pid[slot]);
}

void
bx_bwrap_cgroups_release (struct bx_bwrap_cgroups *cg, size_t slot)
{
  bx_bwrap_cgroups_kill (cg, slot);
  pthread_mutex_lock (&cg->lock);
  cg->busy[slot] = false;
  pthread_cond_signal (&cg->freed);
  pthread_mutex_unlock (&cg->lock);
}

/* Removes <root>/<controller>/TOP/NAME and its slots, killing what is in them. */
static void
remove_instance (const char *root, const char *name)
{
  for (int c = 0; c < CONTROLLERS; c++)
    {
      cleanup_free char *dir = bx_xasprintf ("%s/%s/" TOP "/%s", root, controllers[c], name);
      DIR *d = opendir (dir);
      if (d == NULL)
        continue;
      struct dirent *e;
      while ((e = readdir (d)) != NULL)
        {
          if (e->d_type != DT_DIR || e->d_name[0] == '.')
            continue;
          cleanup_free char *slot = bx_xasprintf ("%s/%s", dir, e->d_name);
          kill_all_in (slot, 0);
          rmdir (slot);
        }
      closedir (d);
      rmdir (dir);
    }
}

void
bx_bwrap_cgroups_close (struct bx_bwrap_cgroups *cg)
{
  if (cg == NULL)
    return;
  for (size_t i = 0; i < cg->slots * CONTROLLERS; i++)
    if (cg->procs[i] >= 0)
      close (cg->procs[i]);
  for (size_t s = 0; s < cg->slots; s++)
    end_keeper (cg, s);
  remove_instance (cg->root, cg->name);
  pthread_mutex_destroy (&cg->lock);
  pthread_cond_destroy (&cg->freed);
  free (cg->busy);
  free (cg->keeper);
  free (cg->keeper_pid);
  free (cg->set);
  free (cg->procs);
  free (cg->name);
  free (cg->root);
  free (cg);
}

/* The start time of process PID (field 22 of /proc/PID/stat), or 0 when it is gone. */
static unsigned long long
start_time (long pid)
{
  cleanup_free char *stat = bx_xasprintf ("/proc/%ld/stat", pid);
  FILE *f = fopen (stat, "re");
  if (f == NULL)
    return 0;
  char buf[1024];
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  /* The command may hold spaces and parentheses: count from its last ')'. */
  char *p = strrchr (buf, ')');
  for (int field = 2; p != NULL && field < 22; field++)
    p = strchr (p + 1, ' ');
  return p != NULL ? strtoull (p + 1, NULL, 10) : 0;
}

bool
bx_bwrap_instance_alive (const char *name)
{
  char *end;
  long pid = strtol (name, &end, 10);
  if (pid <= 0 || *end != '-')
    return true; /* not a name of ours: leave it */
  unsigned long long start = strtoull (end + 1, NULL, 10);
  return start_time (pid) == start;
}

int
bx_bwrap_cgroups_sweep (const char *root)
{
  int removed = 0;
  for (int c = 0; c < CONTROLLERS; c++)
    {
      cleanup_free char *top = bx_xasprintf ("%s/%s/" TOP, root, controllers[c]);
      DIR *d = opendir (top);
      if (d == NULL)
        continue;
      struct dirent *e;
      while ((e = readdir (d)) != NULL)
        {
          if (e->d_type != DT_DIR || e->d_name[0] == '.' || bx_bwrap_instance_alive (e->d_name))
            continue;
          remove_instance (root, e->d_name);
          removed++;
        }
      closedir (d);
    }
  return removed;
}

char *
bx_bwrap_cgroups_own_name (void)
{
  return bx_xasprintf ("%ld-%llu", (long)getpid (), start_time ((long)getpid ()));
}

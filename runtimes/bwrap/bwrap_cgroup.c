/* SPDX-License-Identifier: Apache-2.0 */
/* Per-call cgroups: the pool of slots, the same on both kinds of hierarchy.  What differs
 * (where the folders go, the names of the limits' files) is a backend's: bwrap_cgroup_v1.c for
 * hosts with one hierarchy per controller (Debian 12 with hybrid cgroups), bwrap_cgroup_v2.c for
 * the unified hierarchy that systemd hosts boot with.  The host decides: a cgroup2 file
 * system at the cgroup root is v2, anything else v1.
 *
 * Making a memory cgroup costs milliseconds, and moving a process into one as much again
 * (see bwrap_keeper.c), so the slots are made once, at start, with their limits set, each with
 * a keeper process inside that forks the slot's sandboxes; a call borrows a slot and
 * empties it (every task but the keeper killed) when it ends.  The layout:
 *
 *   <top>/<brokerd pid>-<its start time>/<slot>
 *
 * where <top> is boxmaker-bwrap in each of the memory, pids and cpu hierarchies (v1), or
 * in brokerd's subtree (v2).  The start time tells a dead brokerd's leftovers (swept) from
 * a live one's (never touched), even when a pid is reused. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/deadline.h"
#include "bx/proc_stat.h"

#include "bwrap.h"
#include "instance.h"

/* How long the sweep of slots at brokerd's start and stop waits for what it kills in each,
 * and how long a call's end waits on the sandbox's first process before it looks at the
 * slot again. */
#define KILL_MS 2000
/* How long a call's end, and a slot's emptying before its next use, wait for what they
 * killed: a killed process stays in its exit until the kernel is done with it, which for
 * writes in flight takes as long as the disk needs, and for a process stuck in a file
 * system that no longer answers (a hung FUSE server or network share) takes for ever. */
#define END_MS          30000
#define ACQUIRE_TICK_MS 50

/* A process of the module's that may still be in its exit when a call answers (done below):
 * its pid, and its start time, so that a process that took the pid once this one was reaped
 * is not taken for it.  Pid 0: none. */
struct exiting_ok
{
  pid_t pid;
  unsigned long long start;
};
#define HOST_ROOT "/sys/fs/cgroup"

struct bx_bwrap_cgroups
{
  const struct bx_bwrap_cgroup_backend *b;
  char *tops[BX_BWRAP_CGROUP_DIRS];
  char *name;
  size_t slots;
  int *procs;  /* slots * dirs descriptors of cgroup.procs, open for writing */
  int *folder; /* each slot's folder (v2), for CLONE_INTO_CGROUP; -1 on v1 */
  int *keeper; /* each slot's keeper socket */
  pid_t *keeper_pid;
  struct exiting_ok
      *bubblewrap;             /* each slot's sandbox's bubblewrap (bx_bwrap_cgroups_bubblewrap) */
  struct exiting_ok *helper;   /* each slot's slirp4netns (bx_bwrap_cgroups_helper) */
  pid_t *first;                /* and its first process (bx_bwrap_cgroups_first), or 0 */
  struct bx_bwrap_limits *set; /* each slot's limits as last written */
  bool *busy;
  /* Each slot whose processes were still there END_MS after a kill: no one takes it until
   * it is empty (claim). */
  bool *stuck;
  size_t next; /* where claim looks first: the slot after the last one it gave */
  pthread_mutex_t lock;
  pthread_cond_t freed;
};

int
bx_bwrap_cgroup_write (const char *path, const char *text)
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

int
bx_bwrap_cgroup_set (const char *dir, const char *file, const char *value, bx_error *err)
{
  cleanup_free char *path = bx_xasprintf ("%s/%s", dir, file);
  if (bx_bwrap_cgroup_write (path, value) == 0)
    return 0;
  int saved = errno;
  bx_error_set (err, saved, "cannot write %s to %s", value, path);
  errno = saved;
  return -1;
}

/* The quota is at least 1 ms a period, so a small share takes a longer period (at most
 * 1 s) rather than being rounded up. */
void
bx_bwrap_cgroup_cpu_quota (int64_t cpu_millis, long long *quota, long long *period)
{
  *period = 100000;
  *quota = (long long)cpu_millis * *period / 1000;
  if (*quota < 1000)
    {
      *period = 1000000;
      *quota = (long long)cpu_millis * *period / 1000;
      if (*quota < 1000)
        *quota = 1000;
    }
}

static char *
slot_path (const struct bx_bwrap_cgroups *cg, size_t dir, size_t slot)
{
  return bx_xasprintf ("%s/%s/%zu", cg->tops[dir], cg->name, slot);
}

/* SLOT's folders, in the backend's order (free with free_slot_dirs). */
static void
slot_dirs (const struct bx_bwrap_cgroups *cg, size_t slot, char **dirs)
{
  for (size_t d = 0; d < cg->b->dirs; d++)
    dirs[d] = slot_path (cg, d, slot);
}

static void
free_slot_dirs (const struct bx_bwrap_cgroups *cg, char **dirs)
{
  for (size_t d = 0; d < cg->b->dirs; d++)
    free (dirs[d]);
}

static int
write_limits (struct bx_bwrap_cgroups *cg, size_t slot, const struct bx_bwrap_limits *limits,
              bool force, bx_error *err)
{
  char *dirs[BX_BWRAP_CGROUP_DIRS];
  slot_dirs (cg, slot, dirs);
  int rc = cg->b->write_limits (dirs, &cg->set[slot], limits, force, err);
  int saved = errno;
  free_slot_dirs (cg, dirs);
  if (rc == 0)
    cg->set[slot] = *limits;
  errno = saved;
  return rc;
}

int
bx_bwrap_cgroups_limit (struct bx_bwrap_cgroups *cg, size_t slot,
                        const struct bx_bwrap_limits *limits)
{
  cleanup_error bx_error why = NULL;
  if (write_limits (cg, slot, limits, false, &why) == 0)
    return 0;
  /* What was written is unknown now: the next call writes every file again. */
  int saved = errno;
  memset (&cg->set[slot], 0, sizeof cg->set[slot]);
  errno = saved;
  return -1;
}

static int
start_keeper (struct bx_bwrap_cgroups *cg, size_t slot)
{
  cg->keeper[slot] = bx_bwrap_keeper_start (cg->folder[slot], cg->procs + slot * cg->b->dirs,
                                            cg->b->dirs, &cg->keeper_pid[slot]);
  return cg->keeper[slot] < 0 ? -1 : 0;
}

static int
make_slot (struct bx_bwrap_cgroups *cg, size_t slot, const struct bx_bwrap_limits *limits,
           bx_error *err)
{
  for (size_t d = 0; d < cg->b->dirs; d++)
    {
      cleanup_free char *dir = slot_path (cg, d, slot);
      if (mkdir (dir, 0700) < 0 && errno != EEXIST)
        return bx_error_set (err, errno, "cannot make %s", dir);
    }
  if (write_limits (cg, slot, limits, true, err) < 0)
    return -1;
  for (size_t d = 0; d < cg->b->dirs; d++)
    {
      cleanup_free char *dir = slot_path (cg, d, slot);
      cleanup_free char *procs = bx_xasprintf ("%s/cgroup.procs", dir);
      int fd = open (procs, O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        return bx_error_set (err, errno, "cannot open %s", procs);
      cg->procs[slot * cg->b->dirs + d] = fd;
      if (cg->b->born_in && (cg->folder[slot] = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return bx_error_set (err, errno, "cannot open %s", dir);
    }
  if (start_keeper (cg, slot) < 0)
    return bx_error_set (err, errno, "cannot start the keeper of slot %zu", slot);
  return 0;
}

/* The state, flags and start time of the task TID; false when they cannot be read. */
static bool
task_stat (long tid, struct bx_proc_stat *st)
{
  char path[48];
  snprintf (path, sizeof path, "/proc/%ld/stat", tid);
  return bx_proc_stat_read (path, st);
}

/* Whether the thread TID is done: gone through its exit to a zombie, or, when it is one of
 * EXITING (bubblewrap's own process of the sandbox, and slirp4netns: processes of the
 * module's that run no program of the call), in its exit at all (PF_EXITING, 0x4, in the
 * flags of /proc/TID/stat; proc(5) points to the PF_* defines of the kernel), where it runs
 * no code of its own again and the kernel tears down the sandbox's namespaces, mounts and
 * /tmp, or slirp4netns's network device.  Any other task in its exit may still be waiting
 * there for writes it queued (io_submit), so it is done only once it is a zombie or gone.
 * False when its state cannot be read: one just gone is no longer listed the next time
 * round, and one hidden (hidepid) must be waited for. */
static bool
done (long tid, const struct exiting_ok exiting[2])
{
  struct bx_proc_stat st;
  if (!task_stat (tid, &st))
    return false;
  bool ours = false;
  for (size_t i = 0; i < 2; i++)
    ours |= exiting[i].pid > 0 && tid == exiting[i].pid && st.start_time == exiting[i].start;
  return st.state == 'Z' || st.state == 'X' || (ours && (st.flags & 0x4));
}

/* Whether every thread listed in THREADS (a cgroup's file of them) but SPARE's is done;
 * false when the list cannot be read (the caller then waits for the cgroup to be empty). */
static bool
all_done (const char *threads, pid_t spare, const struct exiting_ok exiting[2])
{
  FILE *f = fopen (threads, "re");
  if (f == NULL)
    return false;
  long tid;
  bool all = true;
  while (all && fscanf (f, "%ld", &tid) == 1)
    all = (pid_t)tid == spare || done (tid, exiting);
  fclose (f);
  return all;
}

/* Waits up to UNTIL (bx_now_ms's clock) for the process PID, just listed in the slot, to
 * end, on a pidfd: the sandbox's first process ends once every other process of its pid
 * namespace is gone, which polling the slot would see late.  Gone already, it is not waited
 * for; its pid taken by another process in between, the wait ends at UNTIL. */
static void
wait_for_end (pid_t pid, int64_t until)
{
  int pidfd = (int)syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return;
  bx_command_pidfd_ended (pidfd, until - bx_now_ms ());
  close (pidfd);
}

/* Kills every task listed in the cgroup folder DIR but SPARE, until none is left, or with
 * THREADS (the folder's file that lists every thread) until each is done (done above):
 * however long the kernel then takes to tear down what EXITING held.  FIRST (0: none
 * known) is the sandbox's first process, waited for on a pidfd once killed.  A task may
 * fork while the list is read, hence the loop.  A sandbox that has just ended stays listed
 * for a moment, until its namespaces are torn down: the waits start short and grow.
 * UNTIL (bx_now_ms's clock) ends the wait.  True once the slot is empty, or each of its
 * threads done; false when UNTIL came first or the slot cannot be read. */
static bool
kill_all_in (const char *dir, const char *threads, pid_t spare, const struct exiting_ok exiting[2],
             pid_t first, int64_t until)
{
  cleanup_free char *procs = bx_xasprintf ("%s/cgroup.procs", dir);
  cleanup_free char *listed_threads = threads != NULL ? bx_xasprintf ("%s/%s", dir, threads) : NULL;
  long wait_ns = 50 * 1000;
  for (;;)
    {
      FILE *f = fopen (procs, "re");
      if (f == NULL)
        return false;
      long pid;
      int found = 0;
      bool first_listed = false;
      while (fscanf (f, "%ld", &pid) == 1)
        {
          if ((pid_t)pid == spare)
            continue;
          kill ((pid_t)pid, SIGKILL);
          found++;
          first_listed |= first > 0 && (pid_t)pid == first;
        }
      fclose (f);
      if (found == 0 || (listed_threads != NULL && all_done (listed_threads, spare, exiting)))
        return true;
      if (bx_now_ms () >= until)
        return false;
      if (first_listed)
        {
          int64_t a_while = bx_now_ms () + KILL_MS;
          wait_for_end (first, until < a_while ? until : a_while);
          first = 0;
          continue;
        }
      struct timespec tick = { 0, wait_ns };
      nanosleep (&tick, NULL);
      if (wait_ns < 10 * 1000 * 1000)
        wait_ns *= 2;
    }
}

/* Which backend the host's hierarchy takes: ROOT when given, else the host's own. */
static const struct bx_bwrap_cgroup_backend *
backend_for (const char *root)
{
  return bx_bwrap_cgroup_is_v2 (root != NULL ? root : HOST_ROOT) ? &bx_bwrap_cgroup_v2
                                                                 : &bx_bwrap_cgroup_v1;
}

int
bx_bwrap_cgroups_open (const char *root, const char *name, size_t slots,
                       const struct bx_bwrap_limits *limits, struct bx_bwrap_cgroups **out,
                       bx_error *err)
{
  struct bx_bwrap_cgroups *cg = bx_xzalloc (sizeof *cg);
  cg->b = backend_for (root);
  cg->name = bx_xstrdup (name);
  cg->slots = slots;
  cg->procs = bx_xmalloc (slots * cg->b->dirs * sizeof (int));
  for (size_t i = 0; i < slots * cg->b->dirs; i++)
    cg->procs[i] = -1;
  cg->folder = bx_xmalloc (slots * sizeof (int));
  cg->busy = bx_xzalloc (slots * sizeof (bool));
  cg->stuck = bx_xzalloc (slots * sizeof (bool));
  cg->keeper = bx_xmalloc (slots * sizeof (int));
  cg->keeper_pid = bx_xzalloc (slots * sizeof (pid_t));
  cg->bubblewrap = bx_xzalloc (slots * sizeof *cg->bubblewrap);
  cg->helper = bx_xzalloc (slots * sizeof *cg->helper);
  cg->first = bx_xzalloc (slots * sizeof (pid_t));
  cg->set = bx_xzalloc (slots * sizeof *cg->set);
  for (size_t s = 0; s < slots; s++)
    cg->keeper[s] = cg->folder[s] = -1;
  pthread_mutex_init (&cg->lock, NULL);
  pthread_cond_init (&cg->freed, NULL);
  if (cg->b->locate (root, cg->tops, err) < 0)
    {
      bx_bwrap_cgroups_close (cg);
      return -1;
    }
  for (size_t d = 0; d < cg->b->dirs; d++)
    {
      cleanup_free char *mine = bx_xasprintf ("%s/%s", cg->tops[d], name);
      if (mkdir (mine, 0700) < 0 && errno != EEXIST)
        {
          /* Named by the folder above boxmaker-bwrap: the hierarchy, or brokerd's subtree. */
          const char *top = cg->tops[d];
          bx_error_set (err, errno, "cannot make cgroups under %.*s",
                        (int)(strrchr (top, '/') - top), top);
          bx_bwrap_cgroups_close (cg);
          return -1;
        }
      if (cg->b->ready (mine, err) < 0)
        {
          bx_bwrap_cgroups_close (cg);
          return -1;
        }
    }
  for (size_t s = 0; s < slots; s++)
    if (make_slot (cg, s, limits, err) < 0)
      {
        bx_bwrap_cgroups_close (cg);
        return -1;
      }
  *out = cg;
  return 0;
}

const char *
bx_bwrap_cgroups_what (const struct bx_bwrap_cgroups *cg)
{
  return cg->b->what;
}

const char *
bx_bwrap_cgroups_where (const struct bx_bwrap_cgroups *cg)
{
  return cg->tops[cg->b->tasks];
}

/* Whether the stuck slot S is empty now, what is in it killed once more; with the lock held.
 * Read at every look for a free slot while it is stuck, which is seldom and short. */
static bool
unstuck (struct bx_bwrap_cgroups *cg, size_t s)
{
  cleanup_free char *dir = slot_path (cg, cg->b->tasks, s);
  static const struct exiting_ok none[2];
  if (!kill_all_in (dir, NULL, cg->keeper_pid[s], none, 0, bx_now_ms ()))
    return false;
  cg->stuck[s] = false;
  return true;
}

/* Waits for a free slot and takes it, as it is; SIZE_MAX once STOP (ARG) is true. */
static size_t
claim (struct bx_bwrap_cgroups *cg, bool (*stop) (const void *), const void *arg)
{
  pthread_mutex_lock (&cg->lock);
  for (;;)
    {
      /* In turn, not the first free one: the slot a call has just given back may still hold
       * what the kernel tears down after it (bubblewrap's namespaces, slirp4netns's network
       * device), which a call taking it would wait for (bx_bwrap_cgroups_empty). */
      for (size_t i = 0; i < cg->slots; i++)
        {
          size_t s = (cg->next + i) % cg->slots;
          if (cg->busy[s] || (cg->stuck[s] && !unstuck (cg, s)))
            continue;
          cg->busy[s] = true;
          cg->next = (s + 1) % cg->slots;
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
  return start_keeper (cg, slot);
}

uint64_t
bx_bwrap_cgroups_oom_kills (struct bx_bwrap_cgroups *cg, size_t slot)
{
  char *dirs[BX_BWRAP_CGROUP_DIRS];
  slot_dirs (cg, slot, dirs);
  uint64_t kills = cg->b->oom_kills (dirs);
  free_slot_dirs (cg, dirs);
  return kills;
}

bool
bx_bwrap_cgroups_kill (struct bx_bwrap_cgroups *cg, size_t slot)
{
  cleanup_free char *dir = slot_path (cg, cg->b->tasks, slot);
  struct exiting_ok exiting[2] = { cg->bubblewrap[slot], cg->helper[slot] };
  /* Found stuck already (by the call's end, before its release): killed again, not waited
   * for again. */
  int64_t until = bx_now_ms () + (cg->stuck[slot] ? 0 : END_MS);
  bool ended
      = kill_all_in (dir, cg->b->threads, cg->keeper_pid[slot], exiting, cg->first[slot], until);
  cg->stuck[slot] = !ended;
  return ended;
}

void
bx_bwrap_cgroups_empty (struct bx_bwrap_cgroups *cg, size_t slot)
{
  cleanup_free char *dir = slot_path (cg, cg->b->tasks, slot);
  static const struct exiting_ok none[2];
  kill_all_in (dir, NULL, cg->keeper_pid[slot], none, 0, bx_now_ms () + END_MS);
  cg->bubblewrap[slot] = cg->helper[slot] = none[0];
  cg->first[slot] = 0;
}

/* PID, with its start time; none when it cannot be read (already gone: nothing to skip). */
static void
mark_exiting_ok (struct exiting_ok *e, pid_t pid)
{
  struct bx_proc_stat st;
  *e = (struct exiting_ok){ 0, 0 };
  if (pid > 0 && task_stat (pid, &st))
    *e = (struct exiting_ok){ pid, st.start_time };
}

void
bx_bwrap_cgroups_bubblewrap (struct bx_bwrap_cgroups *cg, size_t slot, pid_t pid)
{
  mark_exiting_ok (&cg->bubblewrap[slot], pid);
}

void
bx_bwrap_cgroups_helper (struct bx_bwrap_cgroups *cg, size_t slot, pid_t pid)
{
  mark_exiting_ok (&cg->helper[slot], pid);
}

void
bx_bwrap_cgroups_first (struct bx_bwrap_cgroups *cg, size_t slot, pid_t pid)
{
  cg->first[slot] = pid;
}

bool
bx_bwrap_cgroups_holds (struct bx_bwrap_cgroups *cg, size_t slot, pid_t pid)
{
  cleanup_free char *dir = slot_path (cg, cg->b->tasks, slot);
  cleanup_free char *procs = bx_xasprintf ("%s/cgroup.procs", dir);
  FILE *f = fopen (procs, "re");
  if (f == NULL)
    return false;
  long listed;
  bool found = false;
  while (!found && fscanf (f, "%ld", &listed) == 1)
    found = (pid_t)listed == pid;
  fclose (f);
  return found;
}

static bool
stop_now (const void *arg)
{
  (void)arg;
  return true;
}

size_t
bx_bwrap_cgroups_acquire (struct bx_bwrap_cgroups *cg, bool (*stop) (const void *), const void *arg)
{
  size_t slot = claim (cg, stop, arg);
  /* What the last call left may still be going (bx_bwrap_cgroups_kill): its memory, its
   * processes and its /tmp still count against the slot's limits. */
  if (slot != SIZE_MAX)
    bx_bwrap_cgroups_empty (cg, slot);
  return slot;
}

size_t
bx_bwrap_cgroups_try_acquire (struct bx_bwrap_cgroups *cg)
{
  return bx_bwrap_cgroups_acquire (cg, stop_now, NULL);
}

size_t
bx_bwrap_cgroups_try_claim (struct bx_bwrap_cgroups *cg)
{
  return claim (cg, stop_now, NULL);
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

/* Removes TOPS' folders of instance NAME and their slots, killing what is in them (at once
 * with cgroup.kill where the kernel has it, then until the slot is empty). */
static void
remove_instance (const struct bx_bwrap_cgroups *cg, const char *name)
{
  for (size_t t = 0; t < cg->b->dirs; t++)
    {
      size_t d = (cg->b->tasks + t) % cg->b->dirs; /* the tasks' folder first */
      if (cg->tops[d] == NULL)
        continue; /* locate failed before it */
      cleanup_free char *dir = bx_xasprintf ("%s/%s", cg->tops[d], name);
      DIR *listing = opendir (dir);
      if (listing == NULL)
        continue;
      struct dirent *e;
      while ((e = readdir (listing)) != NULL)
        {
          if (e->d_type != DT_DIR || e->d_name[0] == '.')
            continue;
          cleanup_free char *slot = bx_xasprintf ("%s/%s", dir, e->d_name);
          cleanup_free char *kill_file = bx_xasprintf ("%s/cgroup.kill", slot);
          if (t == 0)
            {
              bx_bwrap_cgroup_write (kill_file, "1");
              kill_all_in (slot, NULL, 0, 0, 0, bx_now_ms () + KILL_MS);
            }
          rmdir (slot);
        }
      closedir (listing);
      rmdir (dir);
    }
}

void
bx_bwrap_cgroups_close (struct bx_bwrap_cgroups *cg)
{
  if (cg == NULL)
    return;
  for (size_t i = 0; i < cg->slots * cg->b->dirs; i++)
    if (cg->procs[i] >= 0)
      close (cg->procs[i]);
  for (size_t s = 0; s < cg->slots; s++)
    {
      end_keeper (cg, s);
      if (cg->folder[s] >= 0)
        close (cg->folder[s]);
    }
  if (cg->tops[0] != NULL)
    {
      remove_instance (cg, cg->name);
      cg->b->leave (cg->tops);
    }
  pthread_mutex_destroy (&cg->lock);
  pthread_cond_destroy (&cg->freed);
  for (size_t d = 0; d < BX_BWRAP_CGROUP_DIRS; d++)
    free (cg->tops[d]);
  free (cg->busy);
  free (cg->stuck);
  free (cg->keeper);
  free (cg->keeper_pid);
  free (cg->bubblewrap);
  free (cg->helper);
  free (cg->first);
  free (cg->set);
  free (cg->procs);
  free (cg->folder);
  free (cg->name);
  free (cg);
}

int
bx_bwrap_cgroups_sweep (struct bx_bwrap_cgroups *cg)
{
  int removed = 0;
  for (size_t d = 0; d < cg->b->dirs; d++)
    {
      DIR *listing = opendir (cg->tops[d]);
      if (listing == NULL)
        continue;
      struct dirent *e;
      while ((e = readdir (listing)) != NULL)
        {
          if (e->d_type != DT_DIR || e->d_name[0] == '.' || bx_runtime_instance_alive (e->d_name))
            continue;
          remove_instance (cg, e->d_name);
          removed++;
        }
      closedir (listing);
    }
  return removed;
}

uint64_t
bx_bwrap_cgroup_oom_kill_count (const char *path)
{
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
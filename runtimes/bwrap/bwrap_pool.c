/* SPDX-License-Identifier: Apache-2.0 */
/* The pool: sandboxes made ahead of their calls (the "pool" option), so that a call finds
 * bubblewrap's work done and pays only for its own folders and its tool.
 *
 * A pooled sandbox is everything a call's sandbox is but its granted folders: a slot of
 * its own (cgroups, keeper, the default limits), the module's root, /proc, /dev and a
 * fresh /tmp, every namespace, the seccomp filter, the uid's shares of its counters, and
 * toolkit in it as "toolkit wait", which says it is ready and then waits for its call on
 * standard input.  A call takes one (bwrap_call.c), mounts its folders into it
 * (bwrap_join.c), writes the tool's name and arguments, and ends it with its slot like any
 * other sandbox: each serves exactly one call and is never reused.
 *
 * One thread per instance makes them, one at a time, whenever fewer than the pool's size
 * are ready and a slot is free; it takes free slots only, never waits for one, and is woken
 * when a call gives one back.  While calls run it makes one only when none is ready: it
 * would otherwise share the CPU, and the kernel's lock on mounts, with the calls it is
 * there to speed up.  Calls come first: a call that cannot use a pooled sandbox
 * (http_fetch, mcp_call, a grant's own root, another file size limit) and finds no free
 * slot takes a pooled one's slot, killing the sandbox in it.
 *
 * The sandbox's first process is held by a pidfd, opened as soon as bubblewrap names it and
 * checked to be in the slot's cgroup, where only this module puts processes; the mounter
 * opens that process's namespace and root by pid and checks the pidfd still lives after.
 * Else a process of the sandbox's uid could kill the sandbox and have its pid taken by one
 * of its own, whose namespace would then get the call's folders. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/deadline.h"
#include "bx/fd.h"

#include "bwrap.h"

/* How long a sandbox may take to say it is ready. */
#define MAKE_MS 10000
/* After a sandbox could not be made, the wait before the next try. */
#define RETRY_MS 1000
/* How long a call that gave a dead sandbox's slot back waits for the thread to start
 * making another in it. */
#define START_MS    100
#define STATUS_KEEP 1024

struct bx_bwrap_pool
{
  struct bx_bwrap_instance *inst;
  size_t size;
  struct bx_bwrap_pooled *ready; /* size entries, ready_count of them in use */
  size_t ready_count;
  /* ready_count > 0, read without the lock: by a call waiting for a slot, which asks while
   * it holds the slots' lock, the one the thread takes under this pool's. */
  atomic_bool any_ready;
  bool making;  /* the thread is making one */
  size_t calls; /* calls of the instance running */
  bool closing;
  bool failing; /* the last try failed: said once in the log until one works */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  pthread_t thread;
  int devnull;
};

void
bx_bwrap_pooled_close (struct bx_bwrap_pooled *p)
{
  bx_fd_close (&p->in);
  bx_fd_close (&p->out);
  bx_fd_close (&p->err);
  bx_fd_close (&p->status);
  bx_fd_close (&p->sandbox);
  bx_command_reap_pidfd (&p->pidfd, 0);
  free (p->status_text);
  p->status_text = NULL;
}

void
bx_bwrap_pool_discard (struct bx_bwrap_pool *pool, struct bx_bwrap_pooled *p)
{
  bx_bwrap_cgroups_kill (pool->inst->cgroups, p->slot);
  bx_bwrap_pooled_close (p);
}

/* Waits until the sandbox in P says it is ready ('R' on its standard output) and
 * bubblewrap has named its first process.  0, or -1 with *WHY. */
static int
wait_ready (struct bx_bwrap_pooled *p, const char **why)
{
  size_t len = 0;
  bool said_ready = false;
  p->status_text = bx_xmalloc (STATUS_KEEP + 1);
  p->status_text[0] = '\0';
  int64_t deadline = bx_deadline_in (MAKE_MS);
  while (!said_ready || bx_bwrap_status_child_pid (p->status_text) < 0)
    {
      int64_t left = deadline - bx_now_ms ();
      if (left <= 0)
        {
          *why = "it did not say it was ready in time";
          return -1;
        }
      struct pollfd fds[3] = {
        { .fd = said_ready ? -1 : p->out, .events = POLLIN },
        { .fd = p->status, .events = POLLIN },
        { .fd = p->pidfd, .events = POLLIN },
      };
      if (poll (fds, 3, (int)left) < 0 && errno != EINTR)
        {
          *why = "poll failed";
          return -1;
        }
      if (fds[0].revents)
        {
          char c;
          if (read (p->out, &c, 1) != 1 || c != 'R')
            {
              *why = "toolkit did not say it was ready";
              return -1;
            }
          said_ready = true;
        }
      if (fds[1].revents)
        {
          ssize_t n = read (p->status, p->status_text + len, STATUS_KEEP - len);
          if (n <= 0)
            {
              *why = "bubblewrap's status ended";
              return -1;
            }
          len += (size_t)n;
          p->status_text[len] = '\0';
        }
      if (fds[2].revents)
        {
          *why = "bubblewrap ended";
          return -1;
        }
    }
  return 0;
}

/* Makes a sandbox in SLOT (already taken) into *P.  0, or -1 with *WHY (and errno). */
static int
make (struct bx_bwrap_pool *pool, size_t slot, struct bx_bwrap_pooled *p, const char **why)
{
  struct bx_bwrap_instance *inst = pool->inst;
  *p = (struct bx_bwrap_pooled){
    .slot = slot, .pidfd = -1, .sandbox = -1, .in = -1, .out = -1, .err = -1, .status = -1
  };
  if (bx_bwrap_cgroups_limit (inst->cgroups, slot, &inst->cfg.limits) < 0)
    {
      *why = "cannot set the slot's limits";
      return -1;
    }
  int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 }, status[2] = { -1, -1 };
  cleanup_close int seccomp = bx_bwrap_seccomp_fd (inst->bpf, inst->bpf_len);
  if (seccomp < 0 || socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0
      || pipe2 (out, O_CLOEXEC) < 0 || pipe2 (err, O_CLOEXEC) < 0 || pipe2 (status, O_CLOEXEC) < 0)
    {
      *why = "cannot make its descriptors";
      int fds[] = { in[0], in[1], out[0], out[1], err[0], err[1], status[0], status[1] };
      for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
          close (fds[i]);
      return -1;
    }
  p->in = in[0];
  p->out = out[0];
  p->err = err[0];
  p->status = status[0];
  struct bx_bwrap_call call = { .tool = "wait", .seccomp_fd = 3, .status_fd = 4, .egress_fd = -1 };
  char **argv = bx_bwrap_argv (&inst->cfg, &call);
  int fds[] = { seccomp, status[1] };
  struct bx_bwrap_child child = {
    .cgroups = inst->cgroups,
    .slot = slot,
    .uid = inst->cfg.uid,
    .gid = inst->cfg.gid,
    .file_size = inst->cfg.file_size,
    .fds = fds,
    .fd_count = 2,
    .ucounts = &inst->ucounts,
    .deadline = bx_deadline_in (MAKE_MS),
    .spare_mounter = true,
  };
  p->pidfd = bx_bwrap_spawn (argv, &child, in[1], out[1], err[1]);
  int e = errno;
  bx_bwrap_argv_free (argv);
  close (in[1]);
  close (out[1]);
  close (err[1]);
  close (status[1]);
  if (p->pidfd < 0)
    {
      errno = e;
      *why = "cannot start bubblewrap";
      goto fail;
    }
  bx_bwrap_cgroups_bubblewrap (inst->cgroups, slot, bx_bwrap_pidfd_pid (p->pidfd));
  if (wait_ready (p, why) < 0)
    goto fail;
  pid_t pid = bx_bwrap_status_child_pid (p->status_text);
  p->sandbox_pid = pid;
  bx_bwrap_cgroups_first (inst->cgroups, slot, pid);
  p->sandbox = (int)syscall (SYS_pidfd_open, pid, 0);
  /* The pid is this sandbox's only while the slot holds it, checked after the pidfd is open
   * and while the process still lives. */
  if (p->sandbox < 0 || !bx_bwrap_cgroups_holds (inst->cgroups, slot, pid)
      || syscall (SYS_pidfd_send_signal, p->sandbox, 0, NULL, 0) < 0)
    {
      *why = "its first process is not in its slot";
      goto fail;
    }
  return 0;
fail:
  e = errno;
  bx_bwrap_pool_discard (pool, p);
  errno = e;
  return -1;
}

/* Waits on the pool's condition for up to MS (with the lock held). */
static void
wait_changed (struct bx_bwrap_pool *pool, int64_t ms)
{
  struct timespec until;
  clock_gettime (CLOCK_REALTIME, &until);
  until.tv_sec += ms / 1000;
  until.tv_nsec += (ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L)
    {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
  pthread_cond_timedwait (&pool->changed, &pool->lock, &until);
}

static void *
refill (void *arg)
{
  struct bx_bwrap_pool *pool = arg;
  const struct bx_host *host = pool->inst->host;
  pthread_mutex_lock (&pool->lock);
  while (!pool->closing)
    {
      /* While calls run, one ready is enough: making another would take the CPU and the
       * kernel's mount lock from them. */
      if (pool->ready_count >= pool->size || (pool->ready_count > 0 && pool->calls > 0))
        {
          pthread_cond_wait (&pool->changed, &pool->lock);
          continue;
        }
      /* Emptied below, without the lock: what its last call left may take the kernel a
       * moment to tear down, and calls must not wait for that to take a sandbox. */
      size_t slot = bx_bwrap_cgroups_try_claim (pool->inst->cgroups);
      if (slot == SIZE_MAX)
        {
          pthread_cond_wait (&pool->changed, &pool->lock); /* until a slot is given back */
          continue;
        }
      pool->making = true;
      pthread_cond_broadcast (&pool->changed);
      pthread_mutex_unlock (&pool->lock);
      bx_bwrap_cgroups_empty (pool->inst->cgroups, slot);
      struct bx_bwrap_pooled p;
      const char *why = NULL;
      int made = make (pool, slot, &p, &why);
      int e = errno;
      pthread_mutex_lock (&pool->lock);
      pool->making = false;
      pthread_cond_broadcast (&pool->changed);
      if (made == 0 && !pool->closing)
        {
          pool->ready[pool->ready_count++] = p;
          atomic_store (&pool->any_ready, true);
          pool->failing = false;
          continue;
        }
      if (made == 0)
        bx_bwrap_pool_discard (pool, &p);
      pthread_mutex_unlock (&pool->lock);
      bx_bwrap_cgroups_release (pool->inst->cgroups, slot);
      pthread_mutex_lock (&pool->lock);
      if (made < 0 && !pool->closing)
        {
          if (!pool->failing)
            host->log (host, BX_LOG_WARNING,
                       "cannot make a sandbox ahead for the pool: %s (%s); calls start their "
                       "own until one can be made; see docs/runbook.md#runner-unavailable",
                       why, strerror (e));
          pool->failing = true;
          wait_changed (pool, RETRY_MS);
        }
    }
  pthread_mutex_unlock (&pool->lock);
  return NULL;
}

int
bx_bwrap_pool_open (struct bx_bwrap_instance *inst, size_t size, struct bx_bwrap_pool **out,
                    bx_error *err)
{
  *out = NULL;
  if (size == 0)
    return 0;
  struct bx_bwrap_pool *pool = bx_xzalloc (sizeof *pool);
  pool->inst = inst;
  pool->size = size;
  pool->ready = bx_xzalloc (size * sizeof *pool->ready);
  pool->devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (pool->devnull < 0)
    {
      int e = errno;
      free (pool->ready);
      free (pool);
      return bx_error_set (err, e, "cannot open /dev/null");
    }
  pthread_mutex_init (&pool->lock, NULL);
  pthread_cond_init (&pool->changed, NULL);
  int e = pthread_create (&pool->thread, NULL, refill, pool);
  if (e != 0)
    {
      pthread_mutex_destroy (&pool->lock);
      pthread_cond_destroy (&pool->changed);
      close (pool->devnull);
      free (pool->ready);
      free (pool);
      return bx_error_set (err, e, "cannot start the pool's thread");
    }
  *out = pool;
  return 0;
}

/* Whether P's sandbox still runs: bubblewrap and the sandbox's first process alike. */
static bool
alive (const struct bx_bwrap_pooled *p)
{
  struct pollfd fds[2]
      = { { .fd = p->pidfd, .events = POLLIN }, { .fd = p->sandbox, .events = POLLIN } };
  return poll (fds, 2, 0) == 0;
}

bool
bx_bwrap_pool_take (struct bx_bwrap_pool *pool, bool wait, struct bx_bwrap_pooled *out)
{
  if (pool == NULL)
    return false;
  pthread_mutex_lock (&pool->lock);
  bool given_back = false; /* a dead one's slot, for the thread to make another in */
  for (;;)
    {
      /* One being made is ready sooner than a sandbox of the call's own, which would take
       * as long and share the CPU with it. */
      while (wait && pool->ready_count == 0 && !pool->closing && (pool->making || given_back))
        {
          if (pool->making)
            pthread_cond_wait (&pool->changed, &pool->lock);
          else
            wait_changed (pool, START_MS); /* for the thread to start on it */
          given_back = false;
        }
      if (pool->ready_count == 0)
        break;
      /* The oldest first: each waits about as long. */
      struct bx_bwrap_pooled p = pool->ready[0];
      memmove (pool->ready, pool->ready + 1, --pool->ready_count * sizeof *pool->ready);
      atomic_store (&pool->any_ready, pool->ready_count > 0);
      pthread_cond_broadcast (&pool->changed);
      if (alive (&p))
        {
          pthread_mutex_unlock (&pool->lock);
          *out = p;
          return true;
        }
      /* Killed while it waited (by a process of its uid, say): its slot goes back, and the
       * thread makes another, which this call may wait for. */
      pthread_mutex_unlock (&pool->lock);
      bx_bwrap_pool_discard (pool, &p);
      bx_bwrap_cgroups_release (pool->inst->cgroups, p.slot);
      pthread_mutex_lock (&pool->lock);
      pthread_cond_broadcast (&pool->changed);
      given_back = true;
    }
  pthread_mutex_unlock (&pool->lock);
  return false;
}

bool
bx_bwrap_pool_ready (struct bx_bwrap_pool *pool)
{
  if (pool == NULL)
    return false;
  return atomic_load (&pool->any_ready);
}

size_t
bx_bwrap_pool_evict (struct bx_bwrap_pool *pool)
{
  struct bx_bwrap_pooled p;
  if (!bx_bwrap_pool_take (pool, true, &p))
    return SIZE_MAX;
  bx_bwrap_pool_discard (pool, &p);
  bx_bwrap_cgroups_empty (pool->inst->cgroups, p.slot); /* for its next use, as acquire does */
  return p.slot;
}

void
bx_bwrap_pool_call_started (struct bx_bwrap_pool *pool)
{
  if (pool == NULL)
    return;
  pthread_mutex_lock (&pool->lock);
  pool->calls++;
  pthread_mutex_unlock (&pool->lock);
}

void
bx_bwrap_pool_call_ended (struct bx_bwrap_pool *pool)
{
  if (pool == NULL)
    return;
  pthread_mutex_lock (&pool->lock);
  pool->calls--;
  pthread_cond_broadcast (&pool->changed);
  pthread_mutex_unlock (&pool->lock);
}

int
bx_bwrap_pool_devnull (const struct bx_bwrap_pool *pool)
{
  return pool->devnull;
}

void
bx_bwrap_pool_close (struct bx_bwrap_pool *pool)
{
  if (pool == NULL)
    return;
  pthread_mutex_lock (&pool->lock);
  pool->closing = true;
  pthread_cond_broadcast (&pool->changed);
  pthread_mutex_unlock (&pool->lock);
  pthread_join (pool->thread, NULL);
  for (size_t i = 0; i < pool->ready_count; i++)
    {
      bx_bwrap_pool_discard (pool, &pool->ready[i]);
      bx_bwrap_cgroups_release (pool->inst->cgroups, pool->ready[i].slot);
    }
  pthread_mutex_destroy (&pool->lock);
  pthread_cond_destroy (&pool->changed);
  close (pool->devnull);
  free (pool->ready);
  free (pool);
}

int
bx_bwrap_pool_run (struct bx_bwrap_instance *inst, struct bx_bwrap_pooled *p,
                   const struct bx_bwrap_call *call, const int *mount_fds, const char *input,
                   size_t input_len, uint64_t cap, int64_t deadline, int cancel_fd,
                   struct bx_command_result *o)
{
  size_t count = call->mount_count;
  if (count > 0)
    {
      /* The mounter: the keeper's child, given the sandbox and the call's sources. */
      cleanup_free int *fds = bx_xmalloc ((count + 1) * sizeof (int));
      cleanup_free bool *readonly = bx_xzalloc (count * sizeof (bool));
      cleanup_free bool *inside = bx_xzalloc (count * sizeof (bool));
      cleanup_free char **argv = bx_xmalloc ((count + 2) * sizeof (char *));
      fds[0] = p->sandbox;
      argv[0] = (char *)"join";
      for (size_t i = 0; i < count; i++)
        {
          fds[1 + i] = mount_fds[i];
          readonly[i] = !call->mounts[i].writable;
          inside[i] = bx_bwrap_mount_inside_earlier (call->mounts, i);
          argv[1 + i] = (char *)call->mounts[i].path;
        }
      argv[count + 1] = NULL;
      struct bx_bwrap_child child = {
        .cgroups = inst->cgroups,
        .slot = p->slot,
        .uid = inst->cfg.uid,
        .gid = inst->cfg.gid,
        .fds = fds,
        .fd_count = count + 1,
        .mount_first = 1,
        .mount_count = count,
        .mount_readonly = readonly,
        .mount_inside = inside,
        .join = true,
        .join_pid = p->sandbox_pid,
        /* The mounter's credentials are the sandbox's user namespace's for a moment, where
         * a process of the sandbox's uid may stop it. */
        .deadline = deadline < bx_deadline_in (MAKE_MS) ? deadline : bx_deadline_in (MAKE_MS),
      };
      int devnull = bx_bwrap_pool_devnull (inst->pool);
      int done = bx_bwrap_spawn (argv, &child, devnull, devnull, devnull);
      if (done < 0)
        return -1;
      close (done); /* it has exited, or is about to: the keeper reaps it */
    }
  /* The tool's name first, then its arguments (toolkit's wait_for_call). */
  size_t name_len = strlen (call->tool);
  cleanup_free char *text = bx_xmalloc (name_len + 1 + input_len);
  memcpy (text, call->tool, name_len);
  text[name_len] = '\n';
  memcpy (text + name_len + 1, input, input_len);
  struct bx_command_attach attach = { p->pidfd, p->in, p->out, p->err };
  struct bx_command cmd = {
    .input = text,
    .input_len = name_len + 1 + input_len,
    .keep_output = true,
    .output_cap = cap,
    .error_keep = BX_BWRAP_STDERR_KEEP,
    .deadline = deadline,
    .status_fd = p->status,
    .status_keep = STATUS_KEEP,
    .cancellable = cancel_fd >= 0,
    .cancel_fd = cancel_fd,
    .attach = &attach,
  };
  bx_command_run (&cmd, o);
  /* The run has them now. */
  p->pidfd = p->in = p->out = p->err = -1;
  /* What the status said at the start belongs before the rest ("child-pid"). */
  if (o->status != NULL)
    {
      char *both = bx_xasprintf ("%s%s", p->status_text, o->status);
      free (o->status);
      o->status = both;
      o->status_len = strlen (both);
    }
  return 0;
}

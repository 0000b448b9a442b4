/* SPDX-License-Identifier: Apache-2.0 */
/* One call: the tool's sandbox (and for http_fetch the egress proxy's, see egress.c), with
 * every outcome mapped to the same fixed sentences as podman.so's.
 *
 * The sentences reach the model unlabelled, so they are constants; what bubblewrap said
 * goes to brokerd's log only. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "bwrap.h"
#include "deliver.h"
#include "open_nofollow.h"

const char bx_bwrap_sentence_could_not_run[] = BX_SENTENCE_COULD_NOT_RUN;
#define SENTENCE_COULD_NOT_RUN bx_bwrap_sentence_could_not_run
const char bx_bwrap_sentence_unavailable[] = BX_RUNTIME_SENTENCE_UNAVAILABLE;
#define SENTENCE_UNAVAILABLE bx_bwrap_sentence_unavailable
static const char SENTENCE_STOPPED[] = BX_SENTENCE_STOPPED;
static const char SENTENCE_TIME_LIMIT[] = "the tool ran past its time limit";
static const char SENTENCE_UNEXPECTED[] = BX_RUNTIME_SENTENCE_UNEXPECTED;
const char bx_bwrap_sentence_cancelled[] = BX_SENTENCE_CANCELLED;
#define SENTENCE_CANCELLED bx_bwrap_sentence_cancelled

/* What a cgroup v1 file takes: pids.max up to 2^22, the CPU quota as microseconds. */
#define MAX_PIDS       4194303
#define MAX_CPU_MILLIS (1000ll * 1000000)

#define RUNBOOK_POINTER "see docs/runbook.md#runner-unavailable"
#define STDERR_IN_LOG   "%.3500s"
/* A call's end that took longer than this to empty its slot is logged. */
#define SLOW_END_MS 2000

/* The descriptors bubblewrap gets, in this order, from 3 up. */
#define FD_SECCOMP     3
#define FD_STATUS      4
#define FD_FIRST_MOUNT BX_BWRAP_FD_FIRST_EXTRA

static enum bx_run_status
fail (const char **sentence, const char *text, enum bx_run_status status)
{
  *sentence = text;
  return status;
}

static const char *
flat_stderr (struct bx_command_result *o)
{
  for (char *s = o->err; *s != '\0'; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      *s = ' ';
  return o->err_len ? o->err : "(no standard error)";
}

/* The call's limit WHICH, or FALLBACK (the module's option) when brokerd sets none. */
static uint64_t
spec_or (const struct bx_host *host, const bx_run_spec *spec, int which, uint64_t fallback)
{
  uint64_t v = host->spec_limit (spec, which);
  return v != 0 ? v : fallback;
}

/* The time limit's ceiling, as for the options: a deadline must fit in an int64_t. */
#define MAX_CALL_MS (24ull * 3600 * 1000)

void
bx_bwrap_sandbox (struct bx_bwrap_instance *inst, struct bx_bwrap_call *call, const int *extra_fds,
                  size_t extra_count, size_t slot, const char *input, size_t input_len,
                  uint64_t cap, uint64_t file_size, int64_t deadline, int cancel_fd,
                  struct bx_command_result *o)
{
  cleanup_close int seccomp = bx_bwrap_seccomp_fd (inst->bpf, inst->bpf_len);
  int status[2] = { -1, -1 };
  if (seccomp < 0 || pipe2 (status, O_CLOEXEC) < 0)
    {
      *o = (struct bx_command_result){ .end = BX_COMMAND_NOT_RUN,
                                       .spawn_errno = errno,
                                       .err = bx_xstrdup (""),
                                       .pid = -1,
                                       .pidfd = -1 };
      if (status[0] >= 0)
        {
          close (status[0]);
          close (status[1]);
        }
      return;
    }
  size_t count = 2 + extra_count;
  cleanup_free int *fds = bx_xmalloc (count * sizeof (int));
  fds[0] = seccomp;
  fds[1] = status[1];
  memcpy (fds + 2, extra_fds, extra_count * sizeof (int));
  call->seccomp_fd = FD_SECCOMP;
  call->status_fd = FD_STATUS;

  char **argv = bx_bwrap_argv (&inst->cfg, call);
  /* The egress folder, after the mounts, is bound by bubblewrap itself. */
  cleanup_free bool *readonly = bx_xzalloc ((extra_count + 1) * sizeof (bool));
  cleanup_free bool *inside = bx_xzalloc ((extra_count + 1) * sizeof (bool));
  for (size_t i = 0; i < call->mount_count && i < extra_count; i++)
    {
      readonly[i] = !call->mounts[i].writable;
      inside[i] = bx_bwrap_mount_inside_earlier (call->mounts, i);
    }
  struct bx_bwrap_child child = {
    .cgroups = inst->cgroups,
    .slot = slot,
    .uid = inst->cfg.uid,
    .gid = inst->cfg.gid,
    .file_size = file_size,
    .fds = fds,
    .fd_count = count,
    .mount_first = 2,
    .mount_count = extra_count,
    .mount_readonly = readonly,
    .mount_inside = inside,
    .ucounts = &inst->ucounts,
    .deadline = deadline,
  };
  bx_bwrap_run (argv, &child, input, input_len, cap, deadline, status[0], cancel_fd, o);
  bx_bwrap_argv_free (argv);
  close (status[0]);
  close (status[1]);
}

/* Maps the tool sandbox's outcome to an answer, passing the output on when there is one. */
static enum bx_run_status
answer (struct bx_bwrap_instance *inst, const char *name, struct bx_command_result *o, bool oom,
        uint64_t limit_ms, bx_run_result *result, const char **sentence)
{
  const struct bx_host *host = inst->host;
  bool deliver = false;
  bool refused = false;
  bool started;
  int code = bx_bwrap_status (o->status, &started);
  enum bx_run_status status = BX_RUN_OK;
  switch (o->end)
    {
    case BX_COMMAND_NOT_RUN:
      if (o->spawn_errno == ETIMEDOUT)
        {
          /* The keeper gave up on the sandbox's process before it ran bubblewrap (stopped
           * by a process of its uid, say): the call's time was up. */
          host->log (host, BX_LOG_WARNING,
                     "%s: the sandbox did not start within its time limit of %llu ms; killed", name,
                     (unsigned long long)limit_ms);
          return fail (sentence, SENTENCE_TIME_LIMIT, BX_RUN_FAILED);
        }
      if (o->spawn_errno == ESTALE)
        {
          /* A mount source changed between its open and the sandbox (alone.c): this call's,
           * like bubblewrap's "Race condition binding dirfd". */
          host->log (host, BX_LOG_WARNING,
                     "%s: a mount source was removed, moved or covered while the call started",
                     name);
          return fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
        }
      host->log (host, BX_LOG_ERROR, "%s: cannot start \"%s\": %s; %s", name, inst->cfg.bwrap,
                 strerror (o->spawn_errno), RUNBOOK_POINTER);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    case BX_COMMAND_TIMED_OUT:
      host->log (host, BX_LOG_WARNING, "%s: past its time limit of %llu ms; killed", name,
                 (unsigned long long)limit_ms);
      return fail (sentence, SENTENCE_TIME_LIMIT, BX_RUN_FAILED);
    case BX_COMMAND_CANCELLED:
      return fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED);
    case BX_COMMAND_CAPPED:
      deliver = true;
      break;
    case BX_COMMAND_SIGNALED: /* not after the keeper's spawn: read as an end without status */
    case BX_COMMAND_EXITED:
      if (!started)
        {
          /* bubblewrap failed before the sandbox's process existed: the runtime, not the
           * tool. */
          host->log (host, BX_LOG_ERROR,
                     "%s: bwrap ended before the sandbox started: " STDERR_IN_LOG "; %s", name,
                     flat_stderr (o), RUNBOOK_POINTER);
          return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
        }
      if (oom)
        {
          host->log (host, BX_LOG_WARNING, "%s: killed by its memory limit", name);
          status = fail (sentence, SENTENCE_STOPPED, BX_RUN_FAILED);
        }
      else if ((code < 0 || (code == 1 && o->out_len == 0)) && strncmp (o->err, "bwrap: ", 7) == 0)
        {
          /* bubblewrap's own failure inside the sandbox, before toolkit ran.  A mount whose
           * source changed under it is this call's ("Race condition binding dirfd"); the
           * rest (a grant its uid cannot reach, ...) is the runtime's. */
          bool race = strstr (o->err, "Race condition") != NULL;
          host->log (host, race ? BX_LOG_WARNING : BX_LOG_ERROR,
                     "%s: bwrap could not set up the sandbox: " STDERR_IN_LOG "%s%s", name,
                     flat_stderr (o), race ? "" : "; ", race ? "" : RUNBOOK_POINTER);
          status = race ? fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED)
                        : fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
        }
      else if (code < 0)
        {
          /* bubblewrap itself ended without a word on the sandbox's end: killed. */
          host->log (host, BX_LOG_WARNING,
                     "%s: bwrap ended without the sandbox's status: " STDERR_IN_LOG, name,
                     flat_stderr (o));
          status = fail (sentence, SENTENCE_UNEXPECTED, BX_RUN_FAILED);
        }
      else
        status = bx_runtime_toolkit_exit (host, name, code, flat_stderr (o), &deliver, &refused,
                                          sentence);
      break;
    }
  if (deliver)
    bx_runtime_deliver (host, o, refused, result);
  return status;
}

enum bx_run_status
bx_bwrap_run_tool (struct bx_bwrap_instance *inst, const bx_run_spec *spec, const char *name,
                   int tool, size_t slot, int egress_fd, struct bx_bwrap_pooled *pooled,
                   bx_run_result *result, const char **sentence)
{
  const struct bx_host *host = inst->host;
  size_t count = host->spec_mount_count (spec);
  cleanup_free struct bx_bwrap_mount *mounts = bx_xmalloc ((count + 1) * sizeof *mounts);
  cleanup_free const char **paths = bx_xmalloc ((count + 1) * sizeof *paths);
  cleanup_free int *fds = bx_xmalloc ((count + 1) * sizeof (int));
  size_t opened = 0;
  enum bx_run_status status = BX_RUN_OK;
  for (; opened < count; opened++)
    {
      const char *path = host->spec_mount_path (spec, opened);
      fds[opened] = bx_runtime_open_nofollow (path);
      if (fds[opened] < 0)
        {
          /* A link where a grant's folder was, or the folder gone: nothing is mounted. */
          host->log (host, BX_LOG_ERROR, "%s: cannot open \"%s\" without following links: %s", name,
                     path ? path : "(null)", strerror (errno));
          status = fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
          break;
        }
      paths[opened] = path;
      mounts[opened] = (struct bx_bwrap_mount){
        .path = path,
        .fd = FD_FIRST_MOUNT + (int)opened,
        .writable = host->spec_mount_writable (spec, opened) != 0,
      };
    }
  /* A grant's own root runs only once check_root has seen it match its digest. */
  const char *rootfs = BX_HOST_HAS (host, spec_rootfs) ? host->spec_rootfs (spec) : NULL;
  cleanup_free char *root = NULL;
  struct bx_runtime_root_step *steps = NULL;
  size_t step_count = 0;
  if (status == BX_RUN_OK && rootfs != NULL)
    {
      cleanup_error bx_error why = NULL;
      root = bx_runtime_roots_folder (inst->roots, rootfs);
      if (root == NULL)
        {
          host->log (host, BX_LOG_ERROR,
                     "%s: the grant's root %s is not the folder that was checked (written "
                     "again since? reload brokerd to check it); %s",
                     name, rootfs, RUNBOOK_POINTER);
          status = fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
        }
      else if (bx_runtime_root_steps (root, paths, count, &steps, &step_count, &why) < 0)
        {
          host->log (host, BX_LOG_ERROR, "%s: the grant's root: %s; %s", name, bx_error_msg (why),
                     RUNBOOK_POINTER);
          status = fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
        }
    }
  if (status == BX_RUN_OK)
    {
      size_t extra = count;
      if (egress_fd >= 0)
        fds[extra++] = egress_fd;
      struct bx_bwrap_call call = {
        .tool = host->spec_tool (spec),
        .mounts = mounts,
        .mount_count = count,
        .egress_fd = egress_fd >= 0 ? FD_FIRST_MOUNT + (int)count : -1,
        .root = root != NULL ? steps : NULL,
        .root_count = step_count,
      };
      size_t len = 0;
      const char *input = host->spec_arguments (spec, &len);
      /* The spec's limits win; the options are the defaults, and the output cap is the
       * smaller of the two. */
      uint64_t limit_ms = spec_or (host, spec, BX_LIMIT_TIME, inst->cfg.limit_ms[tool]);
      uint64_t cap = spec_or (host, spec, BX_LIMIT_OUTPUT, inst->cfg.output_cap);
      if (cap > inst->cfg.output_cap)
        cap = inst->cfg.output_cap;
      uint64_t file_size = spec_or (host, spec, BX_LIMIT_FILE_SIZE, inst->cfg.file_size);
      if (limit_ms > MAX_CALL_MS)
        limit_ms = MAX_CALL_MS;
      uint64_t kills = bx_bwrap_cgroups_oom_kills (inst->cgroups, slot);
      struct bx_command_result o;
      int64_t deadline = bx_deadline_in ((int64_t)limit_ms);
      int cancel_fd = host->spec_cancel_fd (spec);
      /* A pooled sandbox was made with the module's root and file size limit, and no egress
       * folder: a call that needs others gets a sandbox of its own in the same slot. */
      if (pooled != NULL
          && (root != NULL || egress_fd >= 0 || file_size != inst->cfg.file_size
              || bx_bwrap_pool_run (inst, pooled, &call, fds, input, len, cap, deadline, cancel_fd,
                                    &o)
                     < 0))
        {
          if (root == NULL && egress_fd < 0 && file_size == inst->cfg.file_size)
            host->log (host, BX_LOG_INFO,
                       "%s: cannot mount the call's folders into a pooled sandbox (%s); "
                       "it runs in one of its own",
                       name, strerror (errno));
          bx_bwrap_pool_discard (inst->pool, pooled);
          pooled = NULL;
        }
      else if (pooled != NULL)
        host->log (host, BX_LOG_DEBUG, "%s: runs in a sandbox made ahead", name);
      if (pooled == NULL)
        bx_bwrap_sandbox (inst, &call, fds, extra, slot, input, len, cap, file_size, deadline,
                          cancel_fd, &o);
      /* Nothing of the call may outlive it: the whole slot goes, then bubblewrap. */
      pid_t first = bx_bwrap_status_child_pid (o.status);
      if (first > 0)
        bx_bwrap_cgroups_first (inst->cgroups, slot, first);
      int64_t killed_at = bx_now_ms ();
      bool ended = bx_bwrap_cgroups_kill (inst->cgroups, slot);
      bx_command_reap (&o, 0);
      int64_t kill_ms = bx_now_ms () - killed_at;
      if (!ended)
        host->log (host, BX_LOG_WARNING,
                   "%s: processes of the call still run %lld ms after they were killed, stuck "
                   "in the kernel (a file system that no longer answers?), or its slot cannot "
                   "be read; the call fails, and its slot serves no other until it is empty",
                   name, (long long)kill_ms);
      else if (o.end == BX_COMMAND_CANCELLED)
        host->log (host, BX_LOG_INFO, "%s: cancelled; sandbox killed in %lld ms", name,
                   (long long)kill_ms);
      else if (kill_ms >= SLOW_END_MS)
        host->log (host, BX_LOG_INFO, "%s: its processes took %lld ms to end after it", name,
                   (long long)kill_ms);
      if (pooled != NULL)
        {
          bx_bwrap_pooled_close (pooled);
          pooled = NULL;
        }
      bool oom = bx_bwrap_cgroups_oom_kills (inst->cgroups, slot) != kills;
      /* Not answered as though it were over: what is still running may yet write. */
      status = ended ? answer (inst, name, &o, oom, limit_ms, result, sentence)
                     : fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
      bx_command_result_clear (&o);
    }
  if (status != BX_RUN_OK && pooled != NULL)
    bx_bwrap_pool_discard (inst->pool, pooled); /* its call failed before it ran */
  bx_runtime_root_steps_free (steps, step_count);
  for (size_t i = 0; i < opened; i++)
    close (fds[i]);
  return status;
}

/* A call waiting for a slot stops waiting once it is cancelled, or once the pool has a
 * sandbox ready whose slot it can take (made in a slot given back meanwhile). */
struct slot_wait
{
  const struct bx_host *host;
  const bx_run_spec *spec;
  struct bx_bwrap_pool *pool;
};

static bool
stop_waiting (const void *arg)
{
  const struct slot_wait *w = arg;
  return w->host->spec_cancelled (w->spec) != 0 || bx_bwrap_pool_ready (w->pool);
}

static enum bx_run_status
call_run (struct bx_bwrap_instance *inst, const bx_run_spec *spec, bx_run_result *result,
          const char **sentence)
{
  const struct bx_host *host = inst->host;
  int tool = host->spec_tool_id (spec);
  if (tool < 0 || tool >= BX_RUNTIME_TOOL_COUNT)
    {
      host->log (host, BX_LOG_ERROR, "unknown tool %d", tool);
      return fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
    }
  /* A grant's own image is podman's (check_root refuses it, so only a host that skipped
   * the check gets here): this module must not run a call in less than the grant asked for. */
  if (BX_HOST_HAS (host, spec_image) && host->spec_image (spec) != NULL)
    {
      host->log (host, BX_LOG_ERROR,
                 "the grant names image %s: bwrap.so runs no image; name a rootfs, or the "
                 "image under podman.so",
                 host->spec_image (spec));
      return fail (sentence, bx_bwrap_sentence_unavailable, BX_RUN_UNAVAILABLE);
    }
  uint64_t n = atomic_fetch_add (&inst->counter, 1);
  cleanup_free char *name = bx_xasprintf ("boxmaker-%s-%s-%llu", host->spec_session (spec),
                                          host->spec_call (spec), (unsigned long long)n);
  if (host->spec_cancelled (spec))
    return fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED);
  /* One slot for everything of the call (for http_fetch, the proxy and slirp4netns too), so
   * that emptying it when the call ends leaves nothing behind.  Its limits are the call's,
   * written before anything starts in it. */
  struct slot_wait wait = { host, spec, inst->pool };
  /* A pooled sandbox where the call can use one; else a free slot, else a pooled sandbox's
   * slot (the call comes before the pool), else the first slot given back or pooled sandbox
   * made. */
  struct bx_bwrap_pooled pooled;
  bool poolable = (tool == BX_RUNTIME_TOOL_READ_FILE || tool == BX_RUNTIME_TOOL_WRITE_FILE
                   || tool == BX_RUNTIME_TOOL_SHELL)
                  && !host->spec_has_egress (spec)
                  && !(BX_HOST_HAS (host, spec_rootfs) && host->spec_rootfs (spec) != NULL);
  bool have_pooled = false;
  size_t slot = SIZE_MAX;
  while (slot == SIZE_MAX)
    {
      have_pooled = poolable && bx_bwrap_pool_take (inst->pool, true, &pooled);
      if (have_pooled)
        break;
      slot = bx_bwrap_cgroups_try_acquire (inst->cgroups);
      if (slot == SIZE_MAX)
        slot = bx_bwrap_pool_evict (inst->pool);
      if (slot == SIZE_MAX)
        slot = bx_bwrap_cgroups_acquire (inst->cgroups, stop_waiting, &wait);
      if (slot == SIZE_MAX && host->spec_cancelled (spec))
        return fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED);
    }
  if (have_pooled)
    slot = pooled.slot;
  const struct bx_bwrap_limits *dflt = &inst->cfg.limits;
  struct bx_bwrap_limits limits = {
    .memory = spec_or (host, spec, BX_LIMIT_MEMORY, dflt->memory),
    .pids = (int64_t)spec_or (host, spec, BX_LIMIT_PIDS, (uint64_t)dflt->pids),
    .cpu_millis = (int64_t)spec_or (host, spec, BX_LIMIT_CPU, (uint64_t)dflt->cpu_millis),
  };
  if (limits.pids > MAX_PIDS)
    limits.pids = MAX_PIDS;
  if (limits.cpu_millis > MAX_CPU_MILLIS)
    limits.cpu_millis = MAX_CPU_MILLIS;
  enum bx_run_status status;
  if (bx_bwrap_cgroups_limit (inst->cgroups, slot, &limits) < 0)
    {
      host->log (host, BX_LOG_ERROR,
                 "%s: cannot set the slot's limits (memory %llu, pids %lld, "
                 "cpu %lld/1000): %s; %s",
                 name, (unsigned long long)limits.memory, (long long)limits.pids,
                 (long long)limits.cpu_millis, strerror (errno), RUNBOOK_POINTER);
      status = fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  else if (host->spec_has_egress (spec))
    status = bx_bwrap_egress_run (inst, spec, name, tool, slot, result, sentence);
  else
    status = bx_bwrap_run_tool (inst, spec, name, tool, slot, -1, have_pooled ? &pooled : NULL,
                                result, sentence);
  if (have_pooled && status == BX_RUN_UNAVAILABLE && pooled.pidfd >= 0)
    bx_bwrap_pool_discard (inst->pool, &pooled); /* the limits could not be set */
  bx_bwrap_cgroups_release (inst->cgroups, slot);
  return status;
}

enum bx_run_status
bx_bwrap_call_run (struct bx_bwrap_instance *inst, const bx_run_spec *spec, bx_run_result *result,
                   const char **sentence)
{
  bx_bwrap_pool_call_started (inst->pool);
  enum bx_run_status status = call_run (inst, spec, result, sentence);
  bx_bwrap_pool_call_ended (inst->pool);
  return status;
}

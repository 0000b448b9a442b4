/* SPDX-License-Identifier: Apache-2.0 */
/* One call: the tool container, and for http_fetch the egress proxy around it, with every
 * outcome mapped to one of the fixed sentences of docs/config.md's table "How a call ends".
 *
 * The sentences reach the model unlabelled, so they are constants; what podman said goes
 * to brokerd's log only. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deliver.h"
#include "egress_records.h"
#include "podman.h"

static const char SENTENCE_COULD_NOT_RUN[] = BX_SENTENCE_COULD_NOT_RUN;
static const char SENTENCE_UNAVAILABLE[] = BX_RUNTIME_SENTENCE_UNAVAILABLE;
static const char SENTENCE_STOPPED[] = BX_SENTENCE_STOPPED;
static const char SENTENCE_TIME_LIMIT[] = BX_SENTENCE_TIME_LIMIT;
static const char SENTENCE_CANCELLED[] = BX_SENTENCE_CANCELLED;
static const char SENTENCE_UNEXPECTED[] = BX_RUNTIME_SENTENCE_UNEXPECTED;
static const char SENTENCE_FILE_SIZE[] = "the tool went past its file size limit";
static const char SENTENCE_NO_LIMITS[]
    = "the tool runner cannot apply this call's memory, process or CPU limit";

#define RUNBOOK_POINTER "see docs/runbook.md#runner-unavailable"

/* brokerd cuts a log line at 4096 bytes; podman's error is cut shorter in the line, so the
 * runbook pointer after it always survives. */
#define STDERR_IN_LOG "%.3500s"

/* How long podman's own short commands (run -d, kill, rm -f) may take before the podman
 * process is killed, and how long `podman run` gets to exit after its container is
 * killed. */
#define HELPER_MS         30000
#define REAP_GRACE_MS     10000
#define PROXY_SOCKET_MS   5000
#define PROXY_SOCKET_TICK 20
/* A container's own deadline (podman --timeout) is its call's limit plus this: brokerd
 * stops it first, and the deadline only counts when nobody is left to. */
#define TIMEOUT_MARGIN_S 2
/* toolkit killed by SIGXFSZ: 128 + 25. */
#define EXIT_FILE_SIZE 153

static const char *
tool_stderr (struct bx_command_result *o)
{
  return o->err_len ? o->err : "(no standard error)";
}

void
bx_podman_execute (const struct bx_podman_instance *inst, char **argv, const char *input,
                   size_t input_len, bool keep, uint64_t cap, int64_t deadline_ms, int cancel_fd,
                   struct bx_command_result *o)
{
  struct bx_command cmd = {
    .argv = (const char *const *)argv,
    .env = (const char *const *)inst->env,
    .input = input,
    .input_len = input_len,
    .keep_output = keep,
    .output_cap = cap,
    .deadline = deadline_ms,
    .cancellable = cancel_fd >= 0,
    .cancel_fd = cancel_fd,
  };
  bx_command_run (&cmd, o);
}

/* Runs one of podman's short commands; failures are only logged (they are clean-up). */
static void
run_helper (struct bx_podman_instance *inst, char **argv, struct bx_command_result *o)
{
  bx_podman_execute (inst, argv, NULL, 0, false, 0, bx_now_ms () + HELPER_MS, -1, o);
  bx_command_reap (o, 0);
}

static void
helper_quiet (struct bx_podman_instance *inst, char **argv)
{
  struct bx_command_result o;
  run_helper (inst, argv, &o);
  if (o.end != BX_COMMAND_EXITED || o.exit_code != 0)
    inst->host->log (inst->host, BX_LOG_DEBUG, "podman %s %s: " STDERR_IN_LOG,
                     argv[1 + inst->cfg.global_count], argv[1 + inst->cfg.global_count + 1],
                     tool_stderr (&o));
  bx_command_result_clear (&o);
  bx_podman_argv_free (argv);
}

/* `podman kill` (SIGKILL, at once) and then `podman rm -f`.  rm -f alone would first send
 * SIGTERM and wait ten seconds, and toolkit as the container's pid 1 ignores SIGTERM. */
void
bx_podman_kill_and_remove (struct bx_podman_instance *inst, const char *name)
{
  helper_quiet (inst, bx_podman_argv_kill (&inst->cfg, name));
  helper_quiet (inst, bx_podman_argv_rm (&inst->cfg, name));
}

static enum bx_run_status
fail (const char **sentence, const char *text, enum bx_run_status status)
{
  *sentence = text;
  return status;
}

/* Runs the tool container and maps its outcome. */
static enum bx_run_status
run_tool (struct bx_podman_instance *inst, const bx_run_spec *spec,
          const struct bx_podman_call *call, uint64_t limit_ms, bx_run_result *result,
          const char **sentence)
{
  const struct bx_host *host = inst->host;
  struct bx_podman_call with_group = *call;
  with_group.oom_group = inst->oom_group;
  char **argv = bx_podman_argv_tool (&inst->cfg, &with_group);
  size_t input_len = 0;
  const char *input = host->spec_arguments (spec, &input_len);
  struct bx_command_result o;

  bx_podman_watch (inst, call->name, true);
  /* The smaller of the call's output cap (always set) and the module's option. */
  uint64_t cap = host->spec_limit (spec, BX_LIMIT_OUTPUT);
  if (cap == 0 || cap > inst->cfg.output_cap)
    cap = inst->cfg.output_cap;
  bx_podman_execute (inst, argv, input, input_len, true, cap, bx_now_ms () + (int64_t)limit_ms,
                     host->spec_cancel_fd (spec), &o);
  bx_podman_argv_free (argv);

  enum bx_run_status status = BX_RUN_OK;
  bool deliver = false;
  bool refused = false;
  switch (o.end)
    {
    case BX_COMMAND_NOT_RUN:
      host->log (host, BX_LOG_ERROR, "%s: cannot start \"%s\": %s; %s", call->name,
                 inst->cfg.podman, strerror (o.spawn_errno), RUNBOOK_POINTER);
      status = fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
      break;
    case BX_COMMAND_CANCELLED:
      {
        /* The client left (or brokerd is stopping): the container goes first, at once;
         * then podman run ends and is reaped. */
        int64_t t0 = bx_now_ms ();
        bx_podman_kill_and_remove (inst, call->name);
        host->log (host, BX_LOG_INFO, "%s: cancelled; container removed in %lld ms", call->name,
                   (long long)(bx_now_ms () - t0));
        bx_command_reap (&o, REAP_GRACE_MS);
        helper_quiet (inst, bx_podman_argv_rm (&inst->cfg, call->name));
        status = fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED);
        break;
      }
    case BX_COMMAND_TIMED_OUT:
    case BX_COMMAND_CAPPED:
      /* Past the time limit, or past the cap: the rest is not wanted, and nothing may
       * outlive the call.  Then `podman run` itself ends (or is killed), and the container
       * is removed once more: the first rm can race with podman still creating it, or
       * with conmon's own clean-up of the killed container. */
      bx_podman_kill_and_remove (inst, call->name);
      bx_command_reap (&o, REAP_GRACE_MS);
      helper_quiet (inst, bx_podman_argv_rm (&inst->cfg, call->name));
      if (o.end == BX_COMMAND_TIMED_OUT)
        {
          host->log (host, BX_LOG_WARNING, "%s: past its time limit of %llu ms; killed", call->name,
                     (unsigned long long)limit_ms);
          status = fail (sentence, SENTENCE_TIME_LIMIT, BX_RUN_FAILED);
        }
      else
        deliver = true;
      break;
    case BX_COMMAND_SIGNALED:
      host->log (host, BX_LOG_WARNING, "%s: podman died of signal %d: " STDERR_IN_LOG, call->name,
                 o.signal, tool_stderr (&o));
      /* Only the client died: its container runs on under conmon, with no time limit. */
      bx_podman_kill_and_remove (inst, call->name);
      status = fail (sentence, SENTENCE_UNEXPECTED, BX_RUN_FAILED);
      break;
    case BX_COMMAND_EXITED:
      switch (o.exit_code)
        {
        case 0:
          deliver = true;
          break;
        case 1:
          /* toolkit refused the call (docs/protocol.md, "A tool's own refusal"): its output is
           * the reason. */
          deliver = true;
          refused = true;
          break;
        case 2:
          host->log (host, BX_LOG_WARNING, "%s: toolkit refused its input: " STDERR_IN_LOG,
                     call->name, tool_stderr (&o));
          status = fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
          break;
        case 125:
        case 126:
        case 127:
          host->log (host, BX_LOG_ERROR, "%s: podman exited %d: " STDERR_IN_LOG "; %s", call->name,
                     o.exit_code, tool_stderr (&o), RUNBOOK_POINTER);
          status = fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
          break;
        case EXIT_FILE_SIZE:
          host->log (host, BX_LOG_WARNING, "%s: past the file size limit of %llu bytes", call->name,
                     (unsigned long long)inst->cfg.file_size);
          status = fail (sentence, SENTENCE_FILE_SIZE, BX_RUN_FAILED);
          break;
        case 137:
          host->log (host, BX_LOG_WARNING, "%s: killed (exit 137): out of memory or a signal",
                     call->name);
          status = fail (sentence, SENTENCE_STOPPED, BX_RUN_FAILED);
          break;
        default:
          host->log (host, BX_LOG_WARNING, "%s: unexpected exit %d: " STDERR_IN_LOG, call->name,
                     o.exit_code, tool_stderr (&o));
          status = fail (sentence, SENTENCE_UNEXPECTED, BX_RUN_FAILED);
          break;
        }
      break;
    }

  bx_podman_watch (inst, call->name, false);
  if (deliver)
    bx_runtime_deliver (host, &o, refused, result);
  bx_command_result_clear (&o);
  return status;
}

/* mkdir -p with mode 0700 for every folder it makes. */
static int
make_folders (const char *path)
{
  char *copy = bx_xstrdup (path);
  for (char *p = copy + 1; *p != '\0'; p++)
    {
      if (*p != '/')
        continue;
      *p = '\0';
      if (mkdir (copy, 0700) < 0 && errno != EEXIST)
        {
          int saved = errno;
          free (copy);
          errno = saved;
          return -1;
        }
      *p = '/';
    }
  int r = mkdir (copy, 0700);
  int saved = errno;
  free (copy);
  if (r < 0 && saved != EEXIST)
    {
      errno = saved;
      return -1;
    }
  return 0;
}

/* Removes the folder PARENT/NAME and all it holds, without following symbolic links. */
void
bx_podman_remove_tree_at (int parent, const char *name)
{
  int fd = openat (parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0)
    {
      DIR *d = fdopendir (fd);
      if (d == NULL)
        close (fd);
      else
        {
          struct dirent *e;
          while ((e = readdir (d)) != NULL)
            {
              if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
                continue;
              if (unlinkat (dirfd (d), e->d_name, 0) < 0 && errno == EISDIR)
                bx_podman_remove_tree_at (dirfd (d), e->d_name);
            }
          closedir (d);
        }
    }
  unlinkat (parent, name, AT_REMOVEDIR);
}

/* Waits for the proxy's socket; false past MS, or at once when the call is cancelled (the
 * tool container then never starts). */
static bool
wait_for_socket (const struct bx_host *host, const bx_run_spec *spec, const char *path, int64_t ms)
{
  int64_t until = bx_now_ms () + ms;
  for (;;)
    {
      struct stat st;
      if (stat (path, &st) == 0)
        return true;
      if (bx_now_ms () >= until || host->spec_cancelled (spec))
        return false;
      struct timespec tick = { 0, PROXY_SOCKET_TICK * 1000 * 1000 };
      nanosleep (&tick, NULL);
    }
}

/* Starts the proxy; 0 when its socket is there, or -1 with the answer set. */
static int
start_proxy (struct bx_podman_instance *inst, const bx_run_spec *spec, const char *name,
             const char *egress_dir, uint64_t timeout_s, const char **sentence,
             enum bx_run_status *status)
{
  const struct bx_host *host = inst->host;
  size_t count = host->spec_egress_count (spec);
  const char **hosts = bx_xmalloc ((count + 1) * sizeof (char *));
  for (size_t i = 0; i < count; i++)
    hosts[i] = host->spec_egress_host (spec, i);
  /* The proxy starts first and ends after the tool: a little more time of its own. */
  char **argv = bx_podman_argv_proxy (&inst->cfg, name, egress_dir, timeout_s + TIMEOUT_MARGIN_S,
                                      hosts, count);
  free (hosts);
  size_t n_private = bx_podman_private_count (host, spec);
  const char **ranges = bx_xmalloc ((n_private + 1) * sizeof (char *));
  for (size_t i = 0; i < n_private; i++)
    ranges[i] = host->spec_egress_private (spec, i);
  argv = bx_podman_argv_add_private (argv, ranges, n_private);
  free (ranges);

  struct bx_command_result o;
  char *proxy = bx_xasprintf ("%s-egress", name);
  bx_podman_watch (inst, proxy, true);
  free (proxy);
  run_helper (inst, argv, &o);
  bx_podman_argv_free (argv);

  int r = -1;
  if (o.end == BX_COMMAND_NOT_RUN)
    host->log (host, BX_LOG_ERROR, "%s-egress: cannot start \"%s\": %s; %s", name, inst->cfg.podman,
               strerror (o.spawn_errno), RUNBOOK_POINTER);
  else if (o.end != BX_COMMAND_EXITED || o.exit_code != 0)
    host->log (host, BX_LOG_ERROR,
               "%s-egress: the egress proxy did not start (%s %d): " STDERR_IN_LOG "; %s", name,
               o.end == BX_COMMAND_EXITED ? "exit" : "ended", o.exit_code, tool_stderr (&o),
               RUNBOOK_POINTER);
  else
    {
      char *sock = bx_xasprintf ("%s/" BX_EGRESS_SOCKET_NAME, egress_dir);
      if (wait_for_socket (host, spec, sock, PROXY_SOCKET_MS))
        r = 0;
      else if (host->spec_cancelled (spec))
        {
          free (sock);
          bx_command_result_clear (&o);
          *status = fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED);
          return -1;
        }
      else
        host->log (host, BX_LOG_ERROR, "%s-egress: no egress socket after %d ms; %s", name,
                   PROXY_SOCKET_MS, RUNBOOK_POINTER);
      free (sock);
    }
  bx_command_result_clear (&o);
  if (r < 0)
    *status = fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
  return r;
}

/* Rootless, brokerd's user cannot give a folder to a subordinate id.  The call's folder is
 * opened to all instead (only brokerd's user reaches it on the host: the folders above it
 * are 0700), and the proxy's records file is made here first, so that it stays brokerd's
 * to read whatever mode the proxy would give it. */
static int
open_to_sandbox (const char *dir)
{
  if (chmod (dir, 0777) < 0)
    return -1;
  char *path = bx_xasprintf ("%s/" BX_EGRESS_RECORDS_FILE, dir);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  free (path);
  if (fd < 0)
    return -1;
  int r = fchmod (fd, 0666);
  close (fd);
  return r;
}

static enum bx_run_status
run_with_egress (struct bx_podman_instance *inst, const bx_run_spec *spec,
                 struct bx_podman_call *call, uint64_t limit_ms, bx_run_result *result,
                 const char **sentence)
{
  const struct bx_host *host = inst->host;
  if (inst->egress_root == NULL)
    {
      host->log (host, BX_LOG_ERROR, "%s: brokerd has no home for egress folders; %s", call->name,
                 RUNBOOK_POINTER);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  if (make_folders (inst->egress_root) < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s: cannot make %s: %s; %s", call->name, inst->egress_root,
                 strerror (errno), RUNBOOK_POINTER);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  char *dir = bx_xasprintf ("%s/%s", inst->egress_root, call->name);
  if (mkdir (dir, 0700) < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s: cannot make %s: %s; %s", call->name, dir,
                 strerror (errno), RUNBOOK_POINTER);
      free (dir);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  /* In the user namespace the proxy and the tool run as the mapped root, which must be able
   * to make and reach the socket. */
  if (!inst->cfg.rootless && chown (dir, (uid_t)inst->sandbox_uid, (gid_t)inst->sandbox_gid) < 0)
    host->log (host, BX_LOG_WARNING, "%s: cannot give %s to uid %lld: %s", call->name, dir,
               (long long)inst->sandbox_uid, strerror (errno));
  if (inst->cfg.rootless && open_to_sandbox (dir) < 0)
    host->log (host, BX_LOG_WARNING, "%s: cannot open %s to the sandbox: %s", call->name, dir,
               strerror (errno));

  enum bx_run_status status;
  if (start_proxy (inst, spec, call->name, dir, call->timeout_s, sentence, &status) == 0)
    {
      call->egress_dir = dir;
      status = run_tool (inst, spec, call, limit_ms, result, sentence);
    }

  /* Whatever happened: the proxy goes, and so does its folder. */
  char *proxy = bx_xasprintf ("%s-egress", call->name);
  bx_podman_kill_and_remove (inst, proxy);
  bx_podman_watch (inst, proxy, false);
  free (proxy);
  int root = open (inst->egress_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root >= 0)
    {
      {
        cleanup_close int dir
            = openat (root, call->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir >= 0)
          bx_runtime_pass_egress_records (inst->host, dir, call->name, result);
      }
      bx_podman_remove_tree_at (root, call->name);
      close (root);
    }
  free (dir);
  return status;
}

/* A mount path becomes `--volume=<path>:<path>:ro`: ':' and ',' would split it there
 * (brokerd's config refuses such grants; this is the module's own guard). */
static bool
mountable (const char *path)
{
  return path != NULL && path[0] == '/' && strpbrk (path, BX_MOUNT_PATH_FORBIDDEN) == NULL;
}

enum bx_run_status
bx_podman_call_run (struct bx_podman_instance *inst, const bx_run_spec *spec, bx_run_result *result,
                    const char **sentence)
{
  const struct bx_host *host = inst->host;
  int tool = host->spec_tool_id (spec);
  if (tool < 0 || tool >= BX_TOOL_COUNT)
    {
      host->log (host, BX_LOG_ERROR, "unknown tool %d", tool);
      return fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
    }

  uint64_t n = atomic_fetch_add (&inst->counter, 1);
  char *name = bx_podman_name (host->spec_session (spec), host->spec_call (spec), n, inst->token);

  size_t count = host->spec_mount_count (spec);
  struct bx_podman_mount *mounts = bx_xmalloc ((count + 1) * sizeof *mounts);
  bool ok = true;
  for (size_t i = 0; i < count; i++)
    {
      mounts[i].path = host->spec_mount_path (spec, i);
      mounts[i].writable = host->spec_mount_writable (spec, i) != 0;
      if (!mountable (mounts[i].path))
        {
          host->log (host, BX_LOG_ERROR, "%s: cannot mount \"%s\"", name,
                     mounts[i].path ? mounts[i].path : "(null)");
          ok = false;
        }
      else if (bx_podman_check_source (mounts[i].path) < 0)
        {
          host->log (host, BX_LOG_ERROR, "%s: refusing to mount \"%s\": %s", name, mounts[i].path,
                     errno == ELOOP ? "a symbolic link is on its way" : strerror (errno));
          ok = false;
        }
    }
  for (size_t i = 0; host->spec_has_egress (spec) && i < host->spec_egress_count (spec); i++)
    {
      const char *h = host->spec_egress_host (spec, i);
      if (h == NULL || h[0] == '\0' || strchr (h, ',') != NULL)
        {
          host->log (host, BX_LOG_ERROR, "%s: cannot pass egress host \"%s\"", name,
                     h ? h : "(null)");
          ok = false;
        }
    }

  const char *image = BX_HOST_HAS (host, spec_image) ? host->spec_image (spec) : NULL;
  if (image != NULL && (image[0] == '\0' || image[0] == '-'))
    {
      host->log (host, BX_LOG_ERROR, "%s: cannot run image \"%s\"", name, image);
      ok = false;
    }
  if (host->spec_has_egress (spec) && !bx_podman_private_ok (host, spec))
    {
      host->log (host, BX_LOG_ERROR, "%s: cannot pass an allow_private range", name);
      ok = false;
    }

  enum bx_run_status status;
  struct bx_podman_call call = {
    .name = name,
    .tool = host->spec_tool (spec),
    .mounts = mounts,
    .mount_count = count,
    .egress_dir = NULL,
    .image = image,
    .memory_bytes = host->spec_limit (spec, BX_LIMIT_MEMORY),
    .pids = host->spec_limit (spec, BX_LIMIT_PIDS),
    .cpu_millis = host->spec_limit (spec, BX_LIMIT_CPU),
    .file_size = host->spec_limit (spec, BX_LIMIT_FILE_SIZE),
  };
  /* The call's time limit when its grant sets one; else the option for its tool.  podman's
   * --timeout follows it, a little later, in case nobody is left to kill the container. */
  uint64_t limit_ms = host->spec_limit (spec, BX_LIMIT_TIME);
  if (limit_ms == 0)
    limit_ms = inst->cfg.limit_ms[tool];
  call.timeout_s = (limit_ms + 999) / 1000 + TIMEOUT_MARGIN_S;
  char problem[sizeof inst->check_problem];
  if (!ok)
    status = fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
  else if (bx_podman_host_check (inst, problem, sizeof problem) != BX_PODMAN_CHECK_OK)
    {
      host->log (host, BX_LOG_ERROR, "%s: %s; %s", name, problem, RUNBOOK_POINTER);
      status = fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  else if (!inst->cfg.cgroup_limits && (call.memory_bytes || call.pids || call.cpu_millis))
    {
      /* The SANDBOX CONTRACT: a limit the module cannot enforce is not given up quietly. */
      host->log (host, BX_LOG_ERROR,
                 "%s: the grant sets a memory, pids or cpus limit and cgroup_limits is off", name);
      status = fail (sentence, SENTENCE_NO_LIMITS, BX_RUN_UNAVAILABLE);
    }
  else if (host->spec_cancelled (spec))
    status = fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED);
  else if (host->spec_has_egress (spec))
    status = run_with_egress (inst, spec, &call, limit_ms, result, sentence);
  else
    status = run_tool (inst, spec, &call, limit_ms, result, sentence);

  free (mounts);
  free (name);
  return status;
}

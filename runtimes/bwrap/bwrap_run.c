/* SPDX-License-Identifier: Apache-2.0 */
/* One bubblewrap process: forked, moved into its cgroup slot, limited, stripped of host
 * privilege and every descriptor it is not given, then run by bx_command (its standard
 * input fed and closed, its standard output kept up to a cap, the first 4 KiB of its
 * standard error kept for the log, its json status read, all within one deadline).
 *
 * The slot's keeper (bwrap_keeper.c) forks it, as bx_command's spawn hook, so that it is born in
 * the slot's cgroups and everything it starts is counted and can be killed with the slot;
 * brokerd watches it through a pidfd.  Between fork and exec the child makes only
 * async-signal-safe calls. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bx/command.h"

#include "bwrap.h"

#define STATUS_KEEP 1024

static void __attribute__ ((noreturn)) child_fail (int report)
{
  int e = errno;
  ssize_t ignored = write (report, &e, sizeof e);
  (void)ignored;
  _exit (127);
}

void
bx_bwrap_signals_default (int ignored)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    {
      struct sigaction sa = { .sa_handler = sig == ignored ? SIG_IGN : SIG_DFL };
      sigaction (sig, &sa, NULL);
    }
}

void
bx_bwrap_child_exec (char *const argv[], const struct bx_bwrap_child *c, int in, int out, int err,
                     int report)
{
  /* If the keeper dies before bubblewrap sets its own --die-with-parent. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);

  /* brokerd may block or ignore signals (SIGPIPE above all): the sandbox starts with the
   * defaults.  SIGXFSZ is ignored, so a write past the file size limit fails with EFBIG,
   * which the tool reports, rather than killing it without a word. */
  bx_bwrap_signals_default (SIGXFSZ);
  if (c->file_size > 0)
    {
      struct rlimit rl = { c->file_size, c->file_size };
      if (setrlimit (RLIMIT_FSIZE, &rl) < 0)
        child_fail (report);
    }

  if (dup2 (in, 0) < 0 || dup2 (out, 1) < 0 || dup2 (err, 2) < 0)
    child_fail (report);
  /* The given descriptors become 3, 4, ...: first each is copied above the targets, so
   * that no dup2 overwrites a source not yet copied. */
  int base = 3 + (int)c->fd_count;
  if (report < base)
    {
      int moved = fcntl (report, F_DUPFD_CLOEXEC, base + (int)c->fd_count);
      if (moved < 0)
        child_fail (report);
      report = moved;
    }
  int high[BX_BWRAP_MAX_FDS];
  if (c->fd_count > sizeof high / sizeof high[0])
    {
      errno = EMFILE;
      child_fail (report);
    }
  for (size_t i = 0; i < c->fd_count; i++)
    if ((high[i] = fcntl (c->fds[i], F_DUPFD, base)) < 0)
      child_fail (report);
  for (size_t i = 0; i < c->fd_count; i++)
    if (dup2 (high[i], 3 + (int)i) < 0)
      child_fail (report);
  /* Nothing of brokerd's but these reaches the sandbox, close-on-exec or not. */
  if (syscall (SYS_close_range, (unsigned)base, ~0u, 4 /* CLOSE_RANGE_CLOEXEC */) < 0)
    for (int fd = base; fd < 65536; fd++)
      if (fd != report)
        close (fd);
  if (fcntl (report, F_SETFD, FD_CLOEXEC) < 0)
    child_fail (report);

  /* Before the uid changes: it takes root to mount. */
  if (c->mount_count > 0)
    {
      int mounts[BX_BWRAP_MAX_FDS];
      if (c->mount_first + c->mount_count > c->fd_count)
        {
          errno = EINVAL;
          child_fail (report);
        }
      for (size_t i = 0; i < c->mount_count; i++)
        mounts[i] = 3 + (int)(c->mount_first + i);
      if (bx_bwrap_bind_alone (mounts, c->mount_readonly, c->mount_count) < 0)
        child_fail (report);
      if (c->join)
        {
          if (c->mount_first < 1
              || bx_bwrap_join (3, c->join_pid, mounts, (const char *const *)argv + 1,
                                c->mount_readonly, c->mount_inside, c->mount_count, c->uid, c->gid)
                     < 0)
            child_fail (report);
          int done = 0;
          ssize_t ignored = write (report, &done, sizeof done);
          (void)ignored;
          _exit (0);
        }
      for (size_t i = 0; c->mount_inside != NULL && i < c->mount_count; i++)
        if (c->mount_inside[i])
          close (mounts[i]);
    }

  /* A mounter never runs its argument list (bx_bwrap_join is above, with its sources). */
  if (c->join)
    {
      errno = EINVAL;
      child_fail (report);
    }

  if (c->gid >= 0 && geteuid () == 0)
    {
      if (syscall (SYS_setgroups, 0, NULL) < 0
          || syscall (SYS_setresgid, (gid_t)c->gid, (gid_t)c->gid, (gid_t)c->gid) < 0)
        child_fail (report);
    }
  if (c->uid >= 0 && geteuid () == 0
      && syscall (SYS_setresuid, (uid_t)c->uid, (uid_t)c->uid, (uid_t)c->uid) < 0)
    child_fail (report);

  /* As the sandbox's uid: the namespace it makes is charged to that uid, never to root. */
  if (c->ucounts != NULL && bx_bwrap_ucounts_enter (c->ucounts) < 0)
    child_fail (report);

  char *const empty[] = { NULL };
  execve (argv[0], argv, empty);
  child_fail (report);
}

/* Parses bubblewrap's json status: *started when it reported the sandbox's process
 * ("child-pid"); the sandbox's exit code ("exit-code"), or -1. */
int
bx_bwrap_status (const char *status, bool *started)
{
  *started = false;
  if (status == NULL)
    return -1;
  *started = strstr (status, "\"child-pid\"") != NULL;
  const char *e = strstr (status, "\"exit-code\":");
  return e != NULL ? atoi (e + strlen ("\"exit-code\":")) : -1;
}

pid_t
bx_bwrap_status_child_pid (const char *status)
{
  const char *k = status != NULL ? strstr (status, "\"child-pid\":") : NULL;
  if (k == NULL)
    return -1;
  const char *digits = k + strlen ("\"child-pid\":");
  char *end;
  long pid = strtol (digits, &end, 10);
  /* Whole once the object is closed: a number cut by a short read is not a pid. */
  return pid > 0 && end != digits && strchr (end, '}') != NULL ? (pid_t)pid : -1;
}

int
bx_bwrap_spawn (char *const argv[], const struct bx_bwrap_child *c, int in, int out, int err)
{
  int sock = bx_bwrap_cgroups_keeper (c->cgroups, c->slot);
  int pidfd = bx_bwrap_keeper_spawn (sock, argv, c, in, out, err);
  /* A keeper that is gone (killed by hand, say) is started again, once per call. */
  if (pidfd < 0 && (errno == EPIPE || errno == ECONNRESET || errno == EPROTO || errno == EBADF)
      && bx_bwrap_cgroups_revive (c->cgroups, c->slot) == 0)
    pidfd = bx_bwrap_keeper_spawn (bx_bwrap_cgroups_keeper (c->cgroups, c->slot), argv, c, in, out,
                                   err);
  return pidfd;
}

pid_t
bx_bwrap_pidfd_pid (int pidfd)
{
  char path[64], text[512];
  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read (fd, text, sizeof text - 1);
  close (fd);
  if (n <= 0)
    return 0;
  text[n] = '\0';
  const char *line = strstr (text, "\nPid:");
  long pid;
  if (line == NULL || sscanf (line + 5, "%ld", &pid) != 1 || pid <= 0)
    return 0;
  return (pid_t)pid;
}

/* bx_command's spawn hook: the slot's keeper forks bubblewrap, born in the slot. */
static int
spawn_in_slot (const struct bx_command *cmd, int in, int out, int err, void *data)
{
  const struct bx_bwrap_child *c = data;
  int pidfd = bx_bwrap_spawn ((char *const *)cmd->argv, c, in, out, err);
  if (pidfd >= 0)
    bx_bwrap_cgroups_bubblewrap (c->cgroups, c->slot, bx_bwrap_pidfd_pid (pidfd));
  return pidfd;
}

void
bx_bwrap_run (char *const argv[], const struct bx_bwrap_child *c, const char *input,
              size_t input_len, uint64_t cap, int64_t deadline_ms, int status_read, int cancel_fd,
              struct bx_command_result *r)
{
  struct bx_command cmd = {
    .argv = (const char *const *)argv,
    .input = input,
    .input_len = input_len,
    .keep_output = true,
    .output_cap = cap,
    .error_keep = BX_BWRAP_STDERR_KEEP,
    .deadline = deadline_ms,
    .spawn = spawn_in_slot,
    .spawn_data = (void *)c,
    .status_fd = status_read,
    .status_keep = status_read >= 0 ? STATUS_KEEP : 0,
    .cancellable = cancel_fd >= 0,
    .cancel_fd = cancel_fd,
  };
  bx_command_run (&cmd, r);
}

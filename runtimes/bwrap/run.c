/* SPDX-License-Identifier: Apache-2.0 */
/* One bubblewrap process: forked, moved into its cgroup slot, limited, stripped of host
 * privilege and every descriptor it is not given, then run; its standard input fed and
 * closed, its standard output kept up to a cap, the first 4 KiB of its standard error kept
 * for the log, its json status read, all within one deadline.
 *
 * The slot's keeper (keeper.c) forks it, so that it is born in the slot's cgroups and
 * everything it starts is counted and can be killed with the slot; brokerd watches it
 * through a pidfd.  Between fork and exec the child makes only async-signal-safe calls.
 *
 * Every descriptor made here is close-on-exec from birth: another thread's child must not
 * inherit this call's pipes. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/fd.h"

#include "bwrap.h"

#define READ_CHUNK  65536
#define STATUS_KEEP 1024

static void __attribute__ ((noreturn)) child_fail (int report)
{
  int e = errno;
  ssize_t ignored = write (report, &e, sizeof e);
  (void)ignored;
  _exit (127);
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
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    {
      struct sigaction sa = { .sa_handler = sig == SIGXFSZ ? SIG_IGN : SIG_DFL };
      sigaction (sig, &sa, NULL);
    }
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
  int high[64];
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
      int mounts[64];
      if (c->mount_first + c->mount_count > c->fd_count)
        {
          errno = EINVAL;
          child_fail (report);
        }
      for (size_t i = 0; i < c->mount_count; i++)
        mounts[i] = 3 + (int)(c->mount_first + i);
      if (bx_bwrap_bind_alone (mounts, c->mount_count) < 0)
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

  char *const empty[] = { NULL };
  execve (argv[0], argv, empty);
  child_fail (report);
}

/* Reads what FD has now into BUF (at most KEEP bytes kept; for standard output a byte past
 * KEEP sets *capped).  1 while it stays open, 0 at EOF, on error or when capped. */
static int
drain (int fd, char **buf, size_t *len, size_t *alloc, uint64_t keep, bool *capped)
{
  char chunk[READ_CHUNK];
  for (;;)
    {
      size_t want = sizeof chunk;
      if (capped != NULL && keep - *len < want)
        want = (size_t)(keep - *len) + 1;
      ssize_t n = read (fd, chunk, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 1;
      if (n <= 0)
        return 0;
      size_t take = (size_t)n;
      if (take > keep - *len)
        take = (size_t)(keep - *len);
      if (*buf == NULL || *len + take + 1 > *alloc)
        {
          size_t grow = *alloc ? *alloc * 2 : 4096;
          while (grow < *len + take + 1)
            grow *= 2;
          *buf = bx_xrealloc (*buf, grow);
          *alloc = grow;
        }
      memcpy (*buf + *len, chunk, take);
      *len += take;
      (*buf)[*len] = '\0';
      if (take < (size_t)n && capped != NULL)
        {
          *capped = true;
          return 0;
        }
    }
}

static void
read_status (struct bx_bwrap_outcome *o, const char *status)
{
  o->tool_exit = -1;
  if (status == NULL)
    return;
  o->started = strstr (status, "\"child-pid\"") != NULL;
  const char *e = strstr (status, "\"exit-code\":");
  if (e != NULL)
    o->tool_exit = atoi (e + strlen ("\"exit-code\":"));
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

void
bx_bwrap_run (char *const argv[], const struct bx_bwrap_child *c, const char *input,
              size_t input_len, uint64_t cap, int64_t deadline_ms, int status_read, int cancel_fd,
              struct bx_bwrap_outcome *o, int *pidfd_out)
{
  int in_pair[2] = { -1, -1 }, out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
  memset (o, 0, sizeof *o);
  o->tool_exit = -1;
  *pidfd_out = -1;

  /* Standard input is a socket so that writing to a process that has gone is EPIPE from
   * send (MSG_NOSIGNAL), not a SIGPIPE to brokerd. */
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) < 0
      || pipe2 (out_pipe, O_CLOEXEC) < 0 || pipe2 (err_pipe, O_CLOEXEC) < 0)
    goto not_run;
  for (int i = 0; i < 2; i++)
    {
      in_pair[i] = bx_fd_above_stdio (in_pair[i]);
      out_pipe[i] = bx_fd_above_stdio (out_pipe[i]);
      err_pipe[i] = bx_fd_above_stdio (err_pipe[i]);
    }

  int pidfd = bx_bwrap_spawn (argv, c, in_pair[1], out_pipe[1], err_pipe[1]);
  if (pidfd < 0)
    goto not_run;
  bx_fd_close (&in_pair[1]);
  bx_fd_close (&out_pipe[1]);
  bx_fd_close (&err_pipe[1]);

  int in_fd = in_pair[0], out_fd = out_pipe[0], err_fd = err_pipe[0];
  fcntl (in_fd, F_SETFL, O_NONBLOCK);
  fcntl (out_fd, F_SETFL, O_NONBLOCK);
  fcntl (err_fd, F_SETFL, O_NONBLOCK);
  if (status_read >= 0)
    fcntl (status_read, F_SETFL, O_NONBLOCK);
  size_t sent = 0, out_alloc = 0, err_alloc = 0, status_len = 0, status_alloc = 0;
  char *errbuf = NULL, *status = NULL;
  bool capped = false, exited = false, cancelled = false;
  if (input_len == 0)
    bx_fd_close (&in_fd);

  while (!capped && !cancelled)
    {
      int left = bx_deadline_left (deadline_ms);
      if (left == 0)
        break;
      struct pollfd fds[6];
      nfds_t n = 0;
      int want[6];
      if (in_fd >= 0)
        fds[n] = (struct pollfd){ .fd = in_fd, .events = POLLOUT }, want[n++] = 0;
      if (out_fd >= 0)
        fds[n] = (struct pollfd){ .fd = out_fd, .events = POLLIN }, want[n++] = 1;
      if (err_fd >= 0)
        fds[n] = (struct pollfd){ .fd = err_fd, .events = POLLIN }, want[n++] = 2;
      if (status_read >= 0)
        fds[n] = (struct pollfd){ .fd = status_read, .events = POLLIN }, want[n++] = 3;
      fds[n] = (struct pollfd){ .fd = pidfd, .events = POLLIN }, want[n++] = 4;
      /* Never read: the host owns it; readable means the call is cancelled. */
      if (cancel_fd >= 0)
        fds[n] = (struct pollfd){ .fd = cancel_fd, .events = POLLIN }, want[n++] = 5;
      int r = poll (fds, n, left);
      if (r < 0 && errno != EINTR)
        break;
      for (nfds_t i = 0; r > 0 && i < n; i++)
        {
          if (fds[i].revents == 0)
            continue;
          switch (want[i])
            {
            case 0:
              {
                ssize_t w
                    = send (in_fd, input + sent, input_len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0)
                  sent += (size_t)w;
                else if (w < 0 && errno != EAGAIN && errno != EINTR)
                  sent = input_len;
                if (sent == input_len)
                  bx_fd_close (&in_fd);
                break;
              }
            case 1:
              if (!drain (out_fd, &o->out, &o->out_len, &out_alloc, cap, &capped))
                bx_fd_close (&out_fd);
              break;
            case 2:
              if (!drain (err_fd, &errbuf, &o->err_len, &err_alloc, BX_BWRAP_STDERR_KEEP, NULL))
                bx_fd_close (&err_fd);
              break;
            case 3:
              if (!drain (status_read, &status, &status_len, &status_alloc, STATUS_KEEP, NULL))
                status_read = -1; /* the caller closes it */
              break;
            case 4:
              exited = true;
              break;
            case 5:
              cancelled = true;
              break;
            }
        }
      if ((exited && !capped) || cancelled)
        break;
    }

  if (cancelled)
    o->end = BX_BWRAP_CANCELLED;
  else if (exited)
    {
      /* What it wrote before it exited is in the pipes; a process that kept them open must
       * not make us wait, hence the non-blocking reads. */
      if (out_fd >= 0)
        drain (out_fd, &o->out, &o->out_len, &out_alloc, cap, &capped);
      if (err_fd >= 0)
        drain (err_fd, &errbuf, &o->err_len, &err_alloc, BX_BWRAP_STDERR_KEEP, NULL);
      if (status_read >= 0)
        drain (status_read, &status, &status_len, &status_alloc, STATUS_KEEP, NULL);
      o->end = BX_BWRAP_EXITED;
      bx_fd_close (&pidfd); /* gone: nothing to give back */
    }
  else
    o->end = capped ? BX_BWRAP_CAPPED : BX_BWRAP_TIMED_OUT;
  if (capped && !cancelled)
    o->end = BX_BWRAP_CAPPED;
  *pidfd_out = pidfd;
  read_status (o, status);
  if (errbuf != NULL)
    memcpy (o->err, errbuf, o->err_len + 1);
  free (errbuf);
  free (status);
  bx_fd_close (&in_fd);
  bx_fd_close (&out_fd);
  bx_fd_close (&err_fd);
  return;

not_run:
  o->end = BX_BWRAP_NOT_RUN;
  o->spawn_errno = errno ? errno : EIO;
  for (int i = 0; i < 2; i++)
    {
      bx_fd_close (&in_pair[i]);
      bx_fd_close (&out_pipe[i]);
      bx_fd_close (&err_pipe[i]);
    }
}

void
bx_bwrap_reap (int pidfd)
{
  if (pidfd < 0)
    return;
  syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  while (poll (&p, 1, 10000) < 0 && errno == EINTR)
    ;
  close (pidfd);
}

void
bx_bwrap_outcome_clear (struct bx_bwrap_outcome *o)
{
  free (o->out);
  o->out = NULL;
  o->out_len = 0;
}

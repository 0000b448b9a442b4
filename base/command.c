/* SPDX-License-Identifier: Apache-2.0 */
/* One way to run a child process: see bx/command.h. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/deadline.h"
#include "bx/fd.h"

extern char **environ;

/* Without a pidfd (kernels before 5.3, or a seccomp filter refusing pidfd_open), and when
 * orphans are to be reaped, the loop wakes this often to ask waitpid. */
#define TICK_MS    20
#define READ_CHUNK 65536

static void
set_nonblocking (int fd)
{
  int flags = fcntl (fd, F_GETFL);
  if (flags >= 0)
    fcntl (fd, F_SETFL, flags | O_NONBLOCK);
}

static int
pidfd_for (pid_t pid)
{
#ifdef SYS_pidfd_open
  return (int)syscall (SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

/* Spawns the command with standard input from IN_CHILD, output to OUT_CHILD and error to
 * ERR_CHILD.  Returns the pid, or -1 with errno (ENOENT when the program is not there). */
static pid_t
spawn (const struct bx_command *cmd, int in_child, int out_child, int err_child, bool *in_chdir)
{
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, pipe_only;
  pid_t pid = -1;
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;

  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, in_child, 0);
  posix_spawn_file_actions_adddup2 (&actions, out_child, 1);
  posix_spawn_file_actions_adddup2 (&actions, err_child, 2);
  if (cmd->cwd != NULL)
    posix_spawn_file_actions_addchdir_np (&actions, cmd->cwd);

  /* The caller may block signals, and daemons ignore SIGPIPE: the program starts with no
   * signal blocked and SIGPIPE at its default, or a closed output pipe would not stop it.
   * Other ignored signals stay ignored, as exec keeps them: a sandbox may ignore SIGXFSZ on
   * purpose, so a write past the file size limit fails with EFBIG instead of killing. */
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigemptyset (&pipe_only);
  sigaddset (&pipe_only, SIGPIPE);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &pipe_only);
  if (cmd->own_group)
    {
      posix_spawnattr_setpgroup (&attr, 0);
      flags |= POSIX_SPAWN_SETPGROUP;
    }
  posix_spawnattr_setflags (&attr, flags);

  char *const *env = cmd->env != NULL ? (char *const *)cmd->env : environ;
  int r = posix_spawnp (&pid, cmd->argv[0], &actions, &attr, (char *const *)cmd->argv, env);
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  if (r != 0)
    {
      /* posix_spawn does not say which step failed: a folder that cannot be entered now is
       * the likely one (a program that is not there reads the same from both). */
      if (cmd->cwd != NULL)
        {
          int dir = open (cmd->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          if (dir < 0)
            {
              *in_chdir = true;
              r = errno;
            }
          else
            close (dir);
        }
      errno = r;
      return -1;
    }
  return pid;
}

struct pump
{
  const struct bx_command *cmd;
  struct bx_command_result *r;
  size_t out_alloc;
  size_t err_keep;
  bool capped;
};

enum stream
{
  STREAM_OUTPUT,
  STREAM_ERROR,
  STREAM_STATUS,
};

/* Keeps what fits of CHUNK (N bytes) in TEXT, whose first KEEP bytes are kept. */
static void
keep_head (char *text, size_t *len, size_t keep, const char *chunk, size_t n)
{
  if (*len >= keep)
    return;
  size_t take = n;
  if (take > keep - *len)
    take = keep - *len;
  memcpy (text + *len, chunk, take);
  *len += take;
  text[*len] = '\0';
}

/* Reads what FD has now.  Returns 1 while it stays open, 0 at EOF or on error. */
static int
read_some (struct pump *p, int fd, enum stream which)
{
  char chunk[READ_CHUNK];
  struct bx_command_result *r = p->r;
  bool is_output = which == STREAM_OUTPUT;
  bool keep = is_output && p->cmd->keep_output && !p->cmd->stream_output;
  bool stream = is_output && p->cmd->stream_output;
  for (;;)
    {
      size_t want = sizeof chunk;
      if (keep)
        {
          /* Never read more than one byte past the cap: the rest is not read.  (cap + 1
           * would wrap to 0 for the largest cap.) */
          uint64_t left = p->cmd->output_cap - r->out_len;
          if (left < want)
            want = (size_t)left + 1;
        }
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, chunk, want));
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 1;
      if (n <= 0)
        return 0;
      if (stream)
        {
          for (ssize_t done = 0; done < n;)
            {
              ssize_t w = TEMP_FAILURE_RETRY (write (p->cmd->output_fd, chunk + done, n - done));
              if (w < 0)
                {
                  /* Nobody reads the output any more: stop the program rather than let it
                   * run on. */
                  r->output_errno = errno;
                  p->capped = true;
                  return 0;
                }
              done += w;
            }
          r->out_len += (size_t)n;
          continue;
        }
      if (keep)
        {
          if (r->out_len + (size_t)n + 1 > p->out_alloc)
            {
              size_t grow = p->out_alloc ? p->out_alloc * 2 : 65536;
              while (grow < r->out_len + (size_t)n + 1)
                grow *= 2;
              r->out = bx_xrealloc (r->out, grow);
              p->out_alloc = grow;
            }
          memcpy (r->out + r->out_len, chunk, (size_t)n);
          r->out_len += (size_t)n;
          if (r->out_len > p->cmd->output_cap)
            {
              r->out_len = (size_t)p->cmd->output_cap;
              p->capped = true;
            }
          r->out[r->out_len] = '\0';
          if (p->capped)
            return 0;
        }
      else if (which == STREAM_ERROR)
        keep_head (r->err, &r->err_len, p->err_keep, chunk, (size_t)n);
      else if (which == STREAM_STATUS)
        keep_head (r->status, &r->status_len, p->cmd->status_keep, chunk, (size_t)n);
    }
}

static void
record_status (struct bx_command_result *r, int status, bool hooked)
{
  if (hooked)
    {
      /* Not the caller's child: it ended, but how is not ours to know. */
      r->end = BX_COMMAND_EXITED;
      r->exit_code = -1;
    }
  else if (WIFEXITED (status))
    {
      r->end = BX_COMMAND_EXITED;
      r->exit_code = WEXITSTATUS (status);
    }
  else
    {
      r->end = BX_COMMAND_SIGNALED;
      r->signal = WIFSIGNALED (status) ? WTERMSIG (status) : 0;
    }
}

/* With reap_orphans, a SIGCHLD wakes the loop through this pipe at once: a script that
 * leaves orphans quickly would otherwise run out of pids between two ticks.  A signal
 * handler can reach only globals; reap_orphans is for a single-threaded caller (a pid 1 or
 * a subreaper), so one is enough. */
static volatile int sigchld_w = -1;

static void
on_sigchld (int sig)
{
  int saved = errno;
  ssize_t n __attribute__ ((unused)) = write (sigchld_w, "", 1);
  errno = saved;
}

/* With reap_orphans: reaps every other ended child; true when PID itself was among them. */
static bool
reap_others (pid_t pid, int *status)
{
  pid_t w;
  int st;
  bool ended = false;
  while ((w = TEMP_FAILURE_RETRY (waitpid (-1, &st, WNOHANG))) > 0)
    if (w == pid)
      {
        *status = st;
        ended = true;
      }
  return ended;
}

void
bx_command_run (const struct bx_command *cmd, struct bx_command_result *r)
{
  int in_pair[2] = { -1, -1 }, out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
  struct pump p = { .cmd = cmd, .r = r };

  int sig_pipe[2] = { -1, -1 };
  struct sigaction old_chld;
  pid_t pid = -1;
  int pidfd = -1;

  /* A hook's process is not the caller's child: no waitpid can see it, nor its orphans;
   * nor is an attached one's. */
  assert ((cmd->spawn == NULL && cmd->attach == NULL) || !cmd->reap_orphans);
  bool hooked = cmd->spawn != NULL || cmd->attach != NULL;
  memset (r, 0, sizeof *r);
  r->pid = -1;
  r->pidfd = -1;
  p.err_keep = cmd->error_keep ? cmd->error_keep : BX_COMMAND_ERROR_KEEP;
  r->err = bx_xmalloc (p.err_keep + 1);
  r->err[0] = '\0';
  int status_fd = -1;
  if (cmd->status_keep > 0)
    {
      r->status = bx_xmalloc (cmd->status_keep + 1);
      r->status[0] = '\0';
      status_fd = cmd->status_fd;
    }

  if (cmd->attach != NULL)
    {
      in_pair[0] = cmd->attach->in;
      out_pipe[0] = cmd->attach->out;
      err_pipe[0] = cmd->attach->err;
      pidfd = cmd->attach->pidfd;
      goto started;
    }
  /* Standard input is a socket rather than a pipe so that writing to a program that has
   * already exited is EPIPE from send(MSG_NOSIGNAL), not a SIGPIPE to the caller. */
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) < 0
      || pipe2 (out_pipe, O_CLOEXEC) < 0
      || (!cmd->error_to_output && pipe2 (err_pipe, O_CLOEXEC) < 0))
    goto not_run;
  for (int i = 0; i < 2; i++)
    {
      in_pair[i] = bx_fd_above_stdio (in_pair[i]);
      out_pipe[i] = bx_fd_above_stdio (out_pipe[i]);
      err_pipe[i] = bx_fd_above_stdio (err_pipe[i]);
    }
  if (in_pair[0] < 0 || in_pair[1] < 0 || out_pipe[0] < 0 || out_pipe[1] < 0
      || (!cmd->error_to_output && (err_pipe[0] < 0 || err_pipe[1] < 0)))
    goto not_run;

  if (cmd->reap_orphans && pipe2 (sig_pipe, O_CLOEXEC | O_NONBLOCK) == 0)
    {
      sigchld_w = sig_pipe[1];
      struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
      sigemptyset (&sa.sa_mask);
      sigaction (SIGCHLD, &sa, &old_chld);
    }

  int err_child = cmd->error_to_output ? out_pipe[1] : err_pipe[1];
  if (cmd->spawn != NULL)
    {
      pidfd = cmd->spawn (cmd, in_pair[1], out_pipe[1], err_child, cmd->spawn_data);
      if (pidfd < 0)
        goto not_run;
    }
  else
    {
      pid = spawn (cmd, in_pair[1], out_pipe[1], err_child, &r->failed_chdir);
      if (pid < 0)
        goto not_run;
      if (cmd->started != NULL)
        cmd->started (pid, cmd->started_data);
      pidfd = pidfd_for (pid);
    }
  bx_fd_close (&in_pair[1]);
  bx_fd_close (&out_pipe[1]);
  bx_fd_close (&err_pipe[1]);

started:;
  int in_fd = in_pair[0], out_fd = out_pipe[0], err_fd = err_pipe[0];
  set_nonblocking (in_fd);
  set_nonblocking (out_fd);
  if (err_fd >= 0)
    set_nonblocking (err_fd);
  if (status_fd >= 0)
    set_nonblocking (status_fd);
  bool tick = pidfd < 0 || cmd->reap_orphans;
  size_t sent = 0;
  bool exited = false;
  bool cancelled = false;
  int status = 0;

  if (cmd->input_len == 0)
    bx_fd_close (&in_fd);

  for (;;)
    {
      if (p.capped || cancelled)
        break;
      int64_t now = bx_now_ms ();
      if (now >= cmd->deadline)
        break;

      struct pollfd fds[7];
      int idx_in = -1, idx_out = -1, idx_err = -1, idx_status = -1, idx_pid = -1, idx_sig = -1,
          idx_cancel = -1;
      nfds_t n = 0;
      if (in_fd >= 0)
        {
          idx_in = (int)n;
          fds[n++] = (struct pollfd){ .fd = in_fd, .events = POLLOUT };
        }
      if (out_fd >= 0)
        {
          idx_out = (int)n;
          fds[n++] = (struct pollfd){ .fd = out_fd, .events = POLLIN };
        }
      if (err_fd >= 0)
        {
          idx_err = (int)n;
          fds[n++] = (struct pollfd){ .fd = err_fd, .events = POLLIN };
        }
      if (status_fd >= 0)
        {
          idx_status = (int)n;
          fds[n++] = (struct pollfd){ .fd = status_fd, .events = POLLIN };
        }
      if (pidfd >= 0)
        {
          idx_pid = (int)n;
          fds[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
        }

      if (sig_pipe[0] >= 0)
        {
          idx_sig = (int)n;
          fds[n++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
        }
      if (cmd->cancellable && cmd->cancel_fd >= 0)
        {
          idx_cancel = (int)n;
          fds[n++] = (struct pollfd){ .fd = cmd->cancel_fd, .events = POLLIN };
        }

      int64_t wait = cmd->deadline - now;
      if (tick && wait > TICK_MS)
        wait = TICK_MS;
      if (wait > 60000)
        wait = 60000;
      int ready = poll (fds, n, (int)wait);
      if (ready < 0 && errno != EINTR)
        break;

      if (ready > 0 && idx_cancel >= 0 && fds[idx_cancel].revents)
        {
          cancelled = true;
          break;
        }
      if (ready > 0 && idx_in >= 0 && fds[idx_in].revents)
        {
          ssize_t w
              = send (in_fd, cmd->input + sent, cmd->input_len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
          if (w > 0)
            sent += (size_t)w;
          else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            sent = cmd->input_len; /* the program no longer reads: nothing more to give it */
          if (sent == cmd->input_len)
            bx_fd_close (&in_fd);
        }
      if (ready > 0 && idx_out >= 0 && fds[idx_out].revents)
        if (!read_some (&p, out_fd, STREAM_OUTPUT))
          bx_fd_close (&out_fd);
      if (ready > 0 && idx_err >= 0 && fds[idx_err].revents)
        if (!read_some (&p, err_fd, STREAM_ERROR))
          bx_fd_close (&err_fd);
      if (ready > 0 && idx_status >= 0 && fds[idx_status].revents)
        if (!read_some (&p, status_fd, STREAM_STATUS))
          status_fd = -1; /* the caller's to close */
      if (p.capped)
        break;

      if (ready > 0 && idx_sig >= 0 && fds[idx_sig].revents)
        {
          char drain[64];
          while (read (sig_pipe[0], drain, sizeof drain) > 0)
            ;
        }
      if (cmd->reap_orphans)
        {
          if (reap_others (pid, &status))
            {
              exited = true;
              break;
            }
          continue;
        }
      bool maybe_exited = pidfd < 0 || (idx_pid >= 0 && ready > 0 && fds[idx_pid].revents);
      if (maybe_exited && hooked)
        {
          exited = true;
          break;
        }
      if (maybe_exited)
        {
          pid_t w = TEMP_FAILURE_RETRY (waitpid (pid, &status, pidfd < 0 ? WNOHANG : 0));
          if (w == pid)
            {
              exited = true;
              break;
            }
        }
    }

  if (exited)
    {
      /* Whatever the program wrote before it exited is in the pipes; a grandchild that kept
       * them open must not make us wait, hence the non-blocking reads. */
      if (out_fd >= 0)
        read_some (&p, out_fd, STREAM_OUTPUT);
      if (err_fd >= 0)
        read_some (&p, err_fd, STREAM_ERROR);
      if (status_fd >= 0)
        read_some (&p, status_fd, STREAM_STATUS);
      record_status (r, status, hooked);
    }
  else
    {
      r->pid = pid;
      r->group = cmd->own_group;
      if (hooked)
        {
          r->pidfd = pidfd; /* the hook's process is known by it alone */
          pidfd = -1;
        }
    }
  if (p.capped)
    r->end = BX_COMMAND_CAPPED;
  else if (cancelled && !exited)
    r->end = BX_COMMAND_CANCELLED;
  else if (!exited)
    r->end = BX_COMMAND_TIMED_OUT;

  bx_fd_close (&in_fd);
  bx_fd_close (&out_fd);
  bx_fd_close (&err_fd);
  bx_fd_close (&pidfd);
  goto out;

not_run:
  r->end = BX_COMMAND_NOT_RUN;
  r->spawn_errno = errno ? errno : EIO;
  for (int i = 0; i < 2; i++)
    {
      bx_fd_close (&in_pair[i]);
      bx_fd_close (&out_pipe[i]);
      bx_fd_close (&err_pipe[i]);
    }
out:
  if (sig_pipe[0] >= 0)
    {
      sigaction (SIGCHLD, &old_chld, NULL);
      sigchld_w = -1;
      bx_fd_close (&sig_pipe[0]);
      bx_fd_close (&sig_pipe[1]);
    }
}

bool
bx_command_pidfd_ended (int pidfd, int64_t ms)
{
  int64_t until = bx_now_ms () + ms;
  for (;;)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      int left = bx_deadline_left (until);
      int n = poll (&p, 1, left);
      if (n > 0)
        return true;
      if ((n < 0 && errno != EINTR) || (n == 0 && left == 0))
        return n < 0; /* a pidfd that cannot be polled has nothing left to wait for */
    }
}

/* How long a killed process may take to be gone before its pidfd is closed anyway. */
#define KILLED_WAIT_MS 10000

bool
bx_command_reap_pidfd (int *pidfd, int64_t grace_ms)
{
  if (*pidfd < 0)
    return false;
  bool killed = false;
  if (!bx_command_pidfd_ended (*pidfd, grace_ms))
    {
#ifdef SYS_pidfd_send_signal
      syscall (SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL, 0);
#endif
      killed = true;
      bx_command_pidfd_ended (*pidfd, KILLED_WAIT_MS);
    }
  bx_fd_close (pidfd);
  return killed;
}

bool
bx_command_reap (struct bx_command_result *r, int64_t grace_ms)
{
  if (r->pidfd >= 0)
    return bx_command_reap_pidfd (&r->pidfd, grace_ms);
  pid_t child = r->pid;
  if (child <= 0)
    return false;
  r->pid = -1;
  int status;
  int64_t until = bx_now_ms () + grace_ms;
  for (;;)
    {
      pid_t w = TEMP_FAILURE_RETRY (waitpid (child, &status, WNOHANG));
      if (w == child || w < 0)
        {
          /* Its group may outlive it; nothing in it may outlive the call. */
          if (r->group)
            kill (-child, SIGKILL);
          return false;
        }
      if (bx_now_ms () >= until)
        break;
      struct timespec tick = { 0, 10 * 1000 * 1000 };
      nanosleep (&tick, NULL);
    }
  kill (r->group ? -child : child, SIGKILL);
  TEMP_FAILURE_RETRY (waitpid (child, &status, 0));
  return true;
}

void
bx_command_result_clear (struct bx_command_result *r)
{
  free (r->out);
  r->out = NULL;
  r->out_len = 0;
  free (r->err);
  r->err = NULL;
  r->err_len = 0;
  free (r->status);
  r->status = NULL;
  r->status_len = 0;
  bx_fd_close (&r->pidfd);
}

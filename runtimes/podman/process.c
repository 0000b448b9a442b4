/* Running podman: one child process with separate arguments (never a shell), its standard
 * input fed and closed, its standard output kept up to a cap, the first 4 KiB of its
 * standard error kept for the log, all within one deadline.
 *
 * This runs on many brokerd threads at once, so it keeps no state outside the call: every
 * descriptor is close-on-exec from birth (another thread's child must not inherit this
 * call's pipes, or their EOF would never come), and the child is waited for by its pid
 * only, never with waitpid(-1). */
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

#include "podman.h"

extern char **environ;

/* Without a pidfd (kernels before 5.3, or a seccomp filter refusing pidfd_open) the loop
 * wakes this often to ask waitpid. */
#define NO_PIDFD_TICK_MS 20
#define READ_CHUNK       65536

int64_t
bx_podman_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* posix_spawn's dup2 onto 0, 1 or 2 is a no-op (and keeps close-on-exec) when the source
 * already is that descriptor, which happens when brokerd runs with a standard stream
 * closed.  Moving our ends above 2 avoids the case. */
static int
above_stdio (int fd)
{
  if (fd < 0 || fd > 2)
    return fd;
  int moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  int saved = errno;
  close (fd);
  errno = saved;
  return moved;
}

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

/* Spawns ARGV with standard input from IN_CHILD, output to OUT_CHILD and ERR_CHILD.
 * Returns the pid, or -1 with errno (ENOENT when the program is not there). */
static pid_t
spawn (char *const argv[], int in_child, int out_child, int err_child)
{
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, all;
  pid_t pid = -1;

  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, in_child, 0);
  posix_spawn_file_actions_adddup2 (&actions, out_child, 1);
  posix_spawn_file_actions_adddup2 (&actions, err_child, 2);

  /* brokerd may block or ignore signals (SIGPIPE above all); podman must start with the
   * defaults, or a closed output pipe would not stop it. */
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  int r = posix_spawnp (&pid, argv[0], &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  if (r != 0)
    {
      errno = r;
      return -1;
    }
  return pid;
}

/* Reads what FD has now.  Returns 1 while it stays open, 0 at EOF or on error. */
static int
read_some (int fd, struct bx_podman_outcome *o, bool is_stdout, bool keep, uint64_t cap,
           size_t *out_cap, bool *capped)
{
  char chunk[READ_CHUNK];
  for (;;)
    {
      size_t want = sizeof chunk;
      if (is_stdout && keep)
        {
          /* Never read more than one byte past the cap: the rest is not read.  (cap + 1
           * would wrap to 0 for the largest cap.) */
          uint64_t left = cap - o->out_len;
          if (left < want)
            want = (size_t)left + 1;
        }
      ssize_t n = read (fd, chunk, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 1;
      if (n <= 0)
        return 0;
      if (is_stdout && keep)
        {
          if (o->out_len + (size_t)n > *out_cap)
            {
              size_t grow = *out_cap ? *out_cap * 2 : 65536;
              while (grow < o->out_len + (size_t)n)
                grow *= 2;
              o->out = bx_podman_xrealloc (o->out, grow);
              *out_cap = grow;
            }
          memcpy (o->out + o->out_len, chunk, (size_t)n);
          o->out_len += (size_t)n;
          if (o->out_len > cap)
            {
              o->out_len = (size_t)cap;
              *capped = true;
              return 0;
            }
        }
      else if (!is_stdout && o->err_len < BX_PODMAN_STDERR_KEEP)
        {
          size_t take = (size_t)n;
          if (take > BX_PODMAN_STDERR_KEEP - o->err_len)
            take = BX_PODMAN_STDERR_KEEP - o->err_len;
          memcpy (o->err + o->err_len, chunk, take);
          o->err_len += take;
          o->err[o->err_len] = '\0';
        }
    }
}

static void
record_status (struct bx_podman_outcome *o, int status)
{
  if (WIFEXITED (status))
    {
      o->end = BX_PODMAN_EXITED;
      o->exit_code = WEXITSTATUS (status);
    }
  else
    {
      o->end = BX_PODMAN_SIGNALED;
      o->signal = WIFSIGNALED (status) ? WTERMSIG (status) : 0;
    }
}

void
bx_podman_execute (char *const argv[], const char *input, size_t input_len, bool keep_output,
                   uint64_t cap, int64_t deadline_ms, int cancel_fd, struct bx_podman_outcome *o,
                   pid_t *child)
{
  int in_pair[2] = { -1, -1 }, out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
  size_t out_alloc = 0;
  bool capped = false;
  bool cancelled = false;

  memset (o, 0, sizeof *o);
  *child = -1;

  /* Standard input is a socket rather than a pipe so that writing to a podman that has
   * already exited is EPIPE from send(MSG_NOSIGNAL), not a SIGPIPE to brokerd. */
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) < 0
      || pipe2 (out_pipe, O_CLOEXEC) < 0 || pipe2 (err_pipe, O_CLOEXEC) < 0)
    goto not_run;
  for (int i = 0; i < 2; i++)
    {
      in_pair[i] = above_stdio (in_pair[i]);
      out_pipe[i] = above_stdio (out_pipe[i]);
      err_pipe[i] = above_stdio (err_pipe[i]);
    }
  if (in_pair[0] < 0 || in_pair[1] < 0 || out_pipe[0] < 0 || out_pipe[1] < 0 || err_pipe[0] < 0
      || err_pipe[1] < 0)
    goto not_run;

  pid_t pid = spawn (argv, in_pair[1], out_pipe[1], err_pipe[1]);
  if (pid < 0)
    goto not_run;
  close_fd (&in_pair[1]);
  close_fd (&out_pipe[1]);
  close_fd (&err_pipe[1]);

  int in_fd = in_pair[0], out_fd = out_pipe[0], err_fd = err_pipe[0];
  set_nonblocking (in_fd);
  set_nonblocking (out_fd);
  set_nonblocking (err_fd);
  int pidfd = pidfd_for (pid);
  size_t sent = 0;
  bool exited = false;
  int status = 0;

  if (input_len == 0)
    close_fd (&in_fd);

  for (;;)
    {
      if (capped || cancelled)
        break;
      int64_t now = bx_podman_now_ms ();
      if (now >= deadline_ms)
        break;

      struct pollfd fds[5];
      int idx_in = -1, idx_out = -1, idx_err = -1, idx_pid = -1, idx_cancel = -1;
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
      if (pidfd >= 0)
        {
          idx_pid = (int)n;
          fds[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
        }
      if (cancel_fd >= 0)
        {
          idx_cancel = (int)n;
          fds[n++] = (struct pollfd){ .fd = cancel_fd, .events = POLLIN };
        }

      int64_t wait = deadline_ms - now;
      if (pidfd < 0 && wait > NO_PIDFD_TICK_MS)
        wait = NO_PIDFD_TICK_MS;
      if (wait > 60000)
        wait = 60000;
      int r = poll (fds, n, (int)wait);
      if (r < 0 && errno != EINTR)
        break;

      if (r > 0 && idx_cancel >= 0 && fds[idx_cancel].revents)
        {
          /* Not read: the host owns it, and every other poller must see it too. */
          cancelled = true;
          break;
        }
      if (r > 0 && idx_in >= 0 && fds[idx_in].revents)
        {
          ssize_t w = send (in_fd, input + sent, input_len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
          if (w > 0)
            sent += (size_t)w;
          else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            sent = input_len; /* podman no longer reads: nothing more to give it */
          if (sent == input_len)
            close_fd (&in_fd);
        }
      if (r > 0 && idx_out >= 0 && fds[idx_out].revents)
        if (!read_some (out_fd, o, true, keep_output, cap, &out_alloc, &capped))
          close_fd (&out_fd);
      if (r > 0 && idx_err >= 0 && fds[idx_err].revents)
        if (!read_some (err_fd, o, false, false, 0, NULL, NULL))
          close_fd (&err_fd);

      bool maybe_exited = pidfd < 0 || (idx_pid >= 0 && r > 0 && fds[idx_pid].revents);
      if (maybe_exited && !capped)
        {
          pid_t w = waitpid (pid, &status, pidfd < 0 ? WNOHANG : 0);
          if (w == pid)
            {
              exited = true;
              break;
            }
        }
    }

  if (exited)
    {
      /* Whatever podman wrote before it exited is in the pipes; a grandchild that kept
       * them open must not make us wait, hence the non-blocking reads. */
      if (out_fd >= 0 && !capped)
        read_some (out_fd, o, true, keep_output, cap, &out_alloc, &capped);
      if (err_fd >= 0)
        read_some (err_fd, o, false, false, 0, NULL, NULL);
      record_status (o, status);
    }
  else
    *child = pid;
  if (capped)
    o->end = BX_PODMAN_CAPPED;
  else if (cancelled && !exited)
    o->end = BX_PODMAN_CANCELLED;
  else if (!exited)
    o->end = BX_PODMAN_TIMED_OUT;

  close_fd (&in_fd);
  close_fd (&out_fd);
  close_fd (&err_fd);
  close_fd (&pidfd);
  return;

not_run:
  o->end = BX_PODMAN_NOT_RUN;
  o->spawn_errno = errno ? errno : EIO;
  for (int i = 0; i < 2; i++)
    {
      close_fd (&in_pair[i]);
      close_fd (&out_pipe[i]);
      close_fd (&err_pipe[i]);
    }
}

bool
bx_podman_reap (pid_t child, int64_t grace_ms)
{
  if (child <= 0)
    return false;
  int status;
  int64_t until = bx_podman_now_ms () + grace_ms;
  for (;;)
    {
      pid_t w = waitpid (child, &status, WNOHANG);
      if (w == child || (w < 0 && errno != EINTR))
        return false;
      if (bx_podman_now_ms () >= until)
        break;
      struct timespec tick = { 0, 10 * 1000 * 1000 };
      nanosleep (&tick, NULL);
    }
  kill (child, SIGKILL);
  while (waitpid (child, &status, 0) < 0 && errno == EINTR)
    ;
  return true;
}

void
bx_podman_outcome_clear (struct bx_podman_outcome *o)
{
  free (o->out);
  o->out = NULL;
  o->out_len = 0;
}

/* shell: `/bin/sh -c <command>` in cwd (or /tmp), standard input empty, standard output and
 * standard error on one pipe so the model sees them in the order written, then how the
 * shell ended.
 *
 * Nothing the command starts may outlive it or hold the pipe open for ever (`sleep 100 &`
 * would otherwise keep toolkit reading until the time limit).  The shell leads its own
 * process group, toolkit is a child subreaper so orphans come back to it, and once the
 * shell has ended toolkit kills the group, then every child it still has, and reads only
 * what is already in the pipe. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/contract.h"
#include "tools.h"

/* What the shell wrote after it ended is read up to this much; a child that escaped every
 * kill could otherwise keep the pipe full for ever. */
#define DRAIN_MAX BX_HOST_OUTPUT_MAX

/* A signal handler can reach only globals: the write end of the self-pipe that wakes the
 * poll loop when a child ends. */
static int sigchld_w = -1;

static void
on_sigchld (int sig)
{
  int saved = errno;
  ssize_t n __attribute__ ((unused)) = write (sigchld_w, "", 1);
  errno = saved;
}

/* Kills the shell's group, then every child toolkit still has (orphans that left the group
 * come back here as toolkit is a subreaper), and reaps them.  A pid stays ours until it is
 * reaped, so killing by pid cannot hit a stranger. */
static void
kill_leftovers (pid_t group)
{
  kill (-group, SIGKILL);

  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/children", (int)getpid ());
  for (int round = 0; round < 64; round++)
    {
      cleanup_fclose FILE *f = fopen (path, "re");
      if (f == NULL)
        break; /* no /proc: the group kill is all there is */
      pid_t pids[256];
      int n = 0, pid;
      while (n < 256 && fscanf (f, "%d", &pid) == 1)
        pids[n++] = pid;
      if (n == 0)
        break;
      for (int i = 0; i < n; i++)
        kill (pids[i], SIGKILL);
      for (int i = 0; i < n; i++)
        bx_toolkit_waitpid (pids[i], NULL, 0);
    }
  while (bx_toolkit_waitpid (-1, NULL, WNOHANG) > 0)
    ;
}

static int
drain (int out_r, int out_fd, bx_error *err)
{
  char buf[65536];
  size_t total = 0;
  if (fcntl (out_r, F_SETFL, O_NONBLOCK) < 0)
    return 0;
  while (total < DRAIN_MAX)
    {
      ssize_t n = read (out_r, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      if (bx_toolkit_write (out_fd, buf, n, err) < 0)
        return -1;
      total += n;
    }
  return 0;
}

int
bx_toolkit_shell (const struct bx_tool_args *args, int out_fd)
{
  const char *cwd = args->cwd != NULL ? args->cwd : "/tmp";
  cleanup_error bx_error err = NULL;

  /* Best effort: without it orphans go to the real init, and the group kill still gets
   * every process that did not leave the group. */
  prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  int sigp[2];
  if (pipe2 (sigp, O_CLOEXEC | O_NONBLOCK) < 0)
    return bx_toolkit_misused ("cannot make a pipe: %s", strerror (errno));
  cleanup_close int sig_r = sigp[0];
  cleanup_close int sig_w = sigp[1];
  sigchld_w = sig_w;
  struct sigaction sa = { 0 };
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset (&sa.sa_mask);
  if (sigaction (SIGCHLD, &sa, NULL) < 0)
    return bx_toolkit_misused ("cannot catch SIGCHLD: %s", strerror (errno));

  int outp[2];
  if (pipe2 (outp, O_CLOEXEC) < 0)
    return bx_toolkit_misused ("cannot make a pipe: %s", strerror (errno));
  cleanup_close int out_r = outp[0];
  cleanup_close int out_w = outp[1];

  const char *argv[] = { "/bin/sh", "-c", args->command, NULL };
  struct bx_toolkit_spawn spawn = {
    .argv = argv,
    .cwd = cwd,
    .stdin_fd = -1,
    .stdout_fd = out_w,
    .stderr_fd = out_w,
    .own_group = true,
  };
  pid_t pid;
  enum bx_toolkit_spawn_stage stage;
  if (bx_toolkit_spawn (&spawn, &pid, &stage, &err) < 0)
    {
      char buf[128];
      const char *reason = bx_toolkit_reason (bx_error_code (err), buf, sizeof buf);
      if (stage == BX_TOOLKIT_SPAWN_CHDIR)
        return bx_toolkit_refuse (out_fd, "shell", cwd, reason);
      return bx_toolkit_refuse (out_fd, "shell", "/bin/sh", reason);
    }
  /* When the container runs out of memory the kernel should rather stop toolkit, the
   * container's pid 1, so the whole container ends (podman exit 137: the fixed sentence
   * "ran out of memory or was killed") instead of losing one process of the command.  The
   * shell was forked with the old value; raising one's own score needs no privilege. */
  int adj = open ("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (adj >= 0)
    {
      if (write (adj, "1000", 4) < 0)
        {
          /* Not fatal: an out-of-memory kill then takes a process of the command only. */
        }
      close (adj);
    }
  /* Only the shell and its children hold the write end now: EOF means they all let go. */
  close (steal_fd (&out_w));

  int status = 0;
  bool write_failed = false;
  char buf[65536];
  bool shell_ended = false;
  for (;;)
    {
      /* The command's orphans come to toolkit (the container's pid 1, or a subreaper):
       * reap them as they end, or each holds a pid (--pids-limit) until the shell ends. */
      pid_t w;
      int w_status;
      while ((w = bx_toolkit_waitpid (-1, &w_status, WNOHANG)) > 0)
        if (w == pid)
          {
            status = w_status;
            shell_ended = true;
          }
      if (shell_ended)
        break;
      struct pollfd p[2] = { { .fd = sig_r, .events = POLLIN }, { .fd = out_r, .events = POLLIN } };
      if (poll (p, out_r >= 0 ? 2 : 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          bx_error_set (&err, errno, "cannot wait for the shell");
          write_failed = true;
          kill (-pid, SIGKILL);
          bx_toolkit_waitpid (pid, &status, 0);
          break;
        }
      if (p[0].revents)
        while (read (sig_r, buf, sizeof buf) > 0)
          ;
      if (out_r >= 0 && p[1].revents)
        {
          ssize_t n = read (out_r, buf, sizeof buf);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            {
              /* Every writer is gone; the shell itself may still run (`exec >&-`). */
              close (steal_fd (&out_r));
              continue;
            }
          if (!write_failed && bx_toolkit_write (out_fd, buf, n, &err) < 0)
            {
              /* Nobody reads us any more: stop the command rather than let it run on. */
              write_failed = true;
              kill (-pid, SIGKILL);
            }
        }
    }

  kill_leftovers (pid);
  if (out_r >= 0 && !write_failed && drain (out_r, out_fd, &err) < 0)
    write_failed = true;
  signal (SIGCHLD, SIG_DFL);
  sigchld_w = -1;
  if (write_failed)
    return bx_toolkit_misused ("%s", bx_error_msg (err));

  cleanup_free char *tail = WIFSIGNALED (status)
                                ? bx_xasprintf ("\n[killed by signal %d]", WTERMSIG (status))
                                : bx_xasprintf ("\n[exit %d]", WEXITSTATUS (status));
  if (bx_toolkit_write (out_fd, tail, strlen (tail), &err) < 0)
    return bx_toolkit_misused ("%s", bx_error_msg (err));
  return BX_TOOLKIT_DONE;
}

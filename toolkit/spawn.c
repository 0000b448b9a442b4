/* Starting shell's /bin/sh and http_fetch's curl: fork, then in the child the descriptors,
 * the directory and exec.  A failure in the child comes back over a close-on-exec pipe, so
 * the parent can tell "cwd does not exist" (a reason for the model) from a program that
 * ran and failed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "tools.h"

struct report
{
  int stage;
  int errnum;
};

pid_t
bx_toolkit_waitpid (pid_t pid, int *status, int flags)
{
  pid_t r;
  do
    r = waitpid (pid, status, flags);
  while (r < 0 && errno == EINTR);
  return r;
}

static void __attribute__ ((noreturn)) child_fail (int report_fd, int stage)
{
  struct report r = { stage, errno };
  ssize_t n __attribute__ ((unused)) = write (report_fd, &r, sizeof r);
  _exit (127);
}

static void __attribute__ ((noreturn)) child (const struct bx_toolkit_spawn *spawn, int report_fd)
{
  /* toolkit ignores SIGPIPE and catches SIGCHLD; an ignored signal stays ignored across
   * exec, and the program should start as if from a plain shell. */
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  signal (SIGCHLD, SIG_DFL);

  if (spawn->own_group)
    setpgid (0, 0);

  int in = spawn->stdin_fd;
  if (in < 0)
    {
      /* Empty input is a pipe with no writer: it needs no /dev in the sandbox. */
      int empty[2];
      if (pipe2 (empty, O_CLOEXEC) < 0)
        child_fail (report_fd, BX_TOOLKIT_SPAWN_EXEC);
      close (empty[1]);
      in = empty[0];
    }
  /* Every descriptor given is close-on-exec and above 2 (main makes sure 0-2 are open), so
   * dup2 leaves clean copies and nothing else leaks into the program. */
  if (dup2 (in, 0) < 0 || dup2 (spawn->stdout_fd, 1) < 0 || dup2 (spawn->stderr_fd, 2) < 0)
    child_fail (report_fd, BX_TOOLKIT_SPAWN_EXEC);

  if (spawn->cwd != NULL && chdir (spawn->cwd) < 0)
    child_fail (report_fd, BX_TOOLKIT_SPAWN_CHDIR);

  execv (spawn->argv[0], (char *const *)spawn->argv);
  child_fail (report_fd, BX_TOOLKIT_SPAWN_EXEC);
}

int
bx_toolkit_spawn (const struct bx_toolkit_spawn *spawn, pid_t *pid,
                  enum bx_toolkit_spawn_stage *stage, bx_error *err)
{
  int report[2];
  if (pipe2 (report, O_CLOEXEC) < 0)
    {
      *stage = BX_TOOLKIT_SPAWN_FORK;
      return bx_error_set (err, errno, "cannot make a pipe");
    }
  cleanup_close int report_r = report[0];
  cleanup_close int report_w = report[1];

  pid_t p = fork ();
  if (p < 0)
    {
      *stage = BX_TOOLKIT_SPAWN_FORK;
      return bx_error_set (err, errno, "cannot fork");
    }
  if (p == 0)
    child (spawn, report_w);

  /* Set the group from both sides, so a kill of the group right after this cannot miss. */
  if (spawn->own_group)
    setpgid (p, p);
  close (steal_fd (&report_w));

  struct report r;
  ssize_t n;
  do
    n = read (report_r, &r, sizeof r);
  while (n < 0 && errno == EINTR);
  if (n == (ssize_t)sizeof r)
    {
      bx_toolkit_waitpid (p, NULL, 0);
      *stage = r.stage;
      return bx_error_set (err, r.errnum, "%s",
                           r.stage == BX_TOOLKIT_SPAWN_CHDIR ? spawn->cwd : spawn->argv[0]);
    }
  *pid = p;
  return 0;
}

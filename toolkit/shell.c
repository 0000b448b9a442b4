/* SPDX-License-Identifier: Apache-2.0 */
/* shell: `/bin/sh -c <command>` in cwd (or /tmp), standard input empty, standard output and
 * standard error on one pipe so the model sees them in the order written, then how the
 * shell ended.
 *
 * Nothing the command starts may outlive it or hold the pipe open for ever (`sleep 100 &`
 * would otherwise keep toolkit reading until the time limit).  The shell leads its own
 * process group, toolkit is a child subreaper so orphans come back to it, and once the
 * shell has ended toolkit reads only what is already in the pipe, then kills the group and
 * every child it still has.
 *
 * With the egress proxy's socket mounted (a grant listing shell with hosts), the command
 * reaches the granted hosts through a forwarder on 127.0.0.1 (egress_local.h), named in
 * the proxy variables it inherits. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/deadline.h"
#include "egress_local.h"
#include "tools.h"

/* When the container runs out of memory the kernel should rather stop toolkit, the
 * container's pid 1, so the whole container ends (podman exit 137: the fixed sentence "ran
 * out of memory or was killed") instead of losing one process of the command.  The shell is
 * already running with the old value; raising one's own score needs no privilege. */
static void
started (pid_t pid, void *data)
{
  *(pid_t *)data = pid;
  int adj = open ("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (adj >= 0)
    {
      if (write (adj, "1000", 4) < 0)
        {
          /* Not fatal: an out-of-memory kill then takes a process of the command only. */
        }
      close (adj);
    }
}

int
bx_toolkit_shell (const struct bx_tool_args *args, const struct bx_toolkit_env *env, int out_fd)
{
  const char *egress_socket = env->egress_socket;
  /* brokerd names the grant's first folder when the model gave no cwd; none only for a grant
   * that mounts no folder. */
  const char *cwd = args->cwd != NULL ? args->cwd : "/tmp";
  cleanup_error bx_error err = NULL;

  /* Best effort: without it orphans go to the real init, and the group kill still gets
   * every process that did not leave the group. */
  prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  /* A grant with hosts: the proxy's socket is mounted, and the command reaches it through a
   * forwarder on 127.0.0.1 and the proxy variables. */
  struct stat st;
  if (egress_socket != NULL && stat (egress_socket, &st) == 0 && S_ISSOCK (st.st_mode)
      && bx_egress_local_for_shell (egress_socket, &err) < 0)
    {
      char buf[128];
      return bx_toolkit_refuse (out_fd, "shell", "127.0.0.1",
                                bx_toolkit_reason (bx_error_code (err), buf, sizeof buf));
    }

  /* The output goes to the runtime as it comes: a command that writes much must cost the
   * sandbox no memory here (the runtime stops reading at its cap and ends the sandbox). */
  const char *argv[] = { "/bin/sh", "-c", args->command, NULL };
  pid_t shell = -1;
  struct bx_command cmd = {
    .argv = argv,
    .cwd = cwd,
    .stream_output = true,
    .output_fd = out_fd,
    .error_to_output = true,
    .deadline = BX_NO_DEADLINE,
    .own_group = true,
    .started = started,
    .started_data = &shell,
    /* The command's orphans come to toolkit (the container's pid 1, or a subreaper): reap
     * them as they end, or each holds a pid (--pids-limit) until the shell ends. */
    .reap_orphans = true,
  };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  if (r.end == BX_COMMAND_NOT_RUN)
    {
      char buf[128];
      const char *reason = bx_toolkit_reason (r.spawn_errno, buf, sizeof buf);
      bx_command_result_clear (&r);
      return bx_toolkit_refuse (out_fd, "shell", r.failed_chdir ? cwd : "/bin/sh", reason);
    }
  /* Nothing the command started may outlive it, nor hold the pipe open. */
  bx_command_reap (&r, 0);
  bx_toolkit_kill_leftovers (shell);

  int write_errno = r.output_errno;
  cleanup_free char *tail = NULL;
  if (r.end == BX_COMMAND_SIGNALED)
    tail = bx_xasprintf ("\n[killed by signal %d]", r.signal);
  else if (r.end == BX_COMMAND_EXITED)
    tail = bx_xasprintf ("\n[exit %d]", r.exit_code);
  bx_command_result_clear (&r);
  if (write_errno != 0)
    return bx_toolkit_misused ("cannot write the output: %s", strerror (write_errno));
  if (tail != NULL && bx_toolkit_write (out_fd, tail, strlen (tail), &err) < 0)
    return bx_toolkit_misused ("%s", bx_error_msg (err));
  return BX_TOOLKIT_DONE;
}

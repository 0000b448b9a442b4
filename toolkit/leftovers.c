/* SPDX-License-Identifier: Apache-2.0 */
/* Nothing a program toolkit started may outlive the call: see tools.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "tools.h"

void
bx_toolkit_kill_leftovers (pid_t group)
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
        TEMP_FAILURE_RETRY (waitpid (pids[i], NULL, 0));
    }
  while (TEMP_FAILURE_RETRY (waitpid (-1, NULL, WNOHANG)) > 0)
    ;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The bare bubblewrap floor of an http_fetch call (bench/runtimes/http_fetch.sh):
 *
 *   fetch_floor DIR PROXY_ARGV... @@ TOOL_ARGV...
 *
 * Runs the egress proxy (PROXY_ARGV: bubblewrap running `toolkit egress-proxy`, its socket
 * in DIR), waits for DIR/egress.sock, runs the tool (TOOL_ARGV: bubblewrap running `toolkit
 * http_fetch`) with this program's standard streams, then kills the proxy, waits for it
 * and removes the socket.  Exits with the tool's status.  No limits, no seccomp filter, no
 * helper between the two: the least that runs the same two programs the way bwrap.so does.
 * The socket is looked for every 100 us, so its wait adds at most that to the floor. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOOK_NS  (100 * 1000)
#define LOOK_MAX 100000 /* 10 s of looks */

static pid_t
start (char **argv, int null)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      if (null >= 0 && (dup2 (null, 0) < 0 || dup2 (null, 1) < 0))
        _exit (126);
      execv (argv[0], argv);
      _exit (127);
    }
  return pid;
}

int
main (int argc, char **argv)
{
  int sep = 0;
  for (int i = 2; i < argc; i++)
    if (strcmp (argv[i], "@@") == 0)
      {
        sep = i;
        break;
      }
  if (argc < 5 || sep < 3 || sep + 1 >= argc)
    {
      fprintf (stderr, "usage: fetch_floor DIR PROXY_ARGV... @@ TOOL_ARGV...\n");
      return 2;
    }
  argv[sep] = NULL;
  char sock[4096];
  snprintf (sock, sizeof sock, "%s/egress.sock", argv[1]);
  FILE *null = fopen ("/dev/null", "r+");
  pid_t proxy = start (argv + 2, null != NULL ? fileno (null) : -1);
  if (proxy < 0)
    return 126;
  struct stat st;
  int looks = 0;
  while (stat (sock, &st) < 0 && looks++ < LOOK_MAX && waitpid (proxy, NULL, WNOHANG) == 0)
    {
      struct timespec t = { 0, LOOK_NS };
      nanosleep (&t, NULL);
    }
  int status = 126 << 8;
  pid_t tool = stat (sock, &st) == 0 ? start (argv + sep + 1, -1) : -1;
  if (tool > 0)
    while (waitpid (tool, &status, 0) < 0 && errno == EINTR)
      ;
  kill (proxy, SIGKILL);
  waitpid (proxy, NULL, 0);
  unlink (sock);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

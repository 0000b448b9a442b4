/* SPDX-License-Identifier: Apache-2.0 */
/* What bwrap.so's non-recursive mount sources (runtimes/bwrap/bwrap_alone.c) cost: the same bare
 * bubblewrap sandbox with one --bind-fd grant, started as bwrap.so starts it (a child that
 * drops to uid 65534 and runs bubblewrap), with and without bx_bwrap_bind_alone first,
 * alternating round by round; prints the medians and their ratio.
 *
 *   alone GRANT_FOLDER ROUNDS      (as root; alone.sh builds and runs it) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bwrap.h"

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int
by_value (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One sandbox; its time in ms, or -1. */
static double
one (const char *grant, int alone)
{
  double t0 = now_ms ();
  pid_t pid = fork ();
  if (pid < 0)
    return -1;
  if (pid == 0)
    {
      int fd = open (grant, O_PATH | O_CLOEXEC);
      if (fd < 0 || dup2 (fd, 5) < 0)
        _exit (3);
      fd = 5;
      if (alone && bx_bwrap_bind_alone (&fd, NULL, 1) < 0)
        _exit (4);
      if (setresgid (65534, 65534, 65534) < 0 || setresuid (65534, 65534, 65534) < 0)
        _exit (5);
      char *argv[] = { "bwrap",
                       "--unshare-all",
                       "--unshare-user",
                       "--die-with-parent",
                       "--ro-bind",
                       "/usr",
                       "/usr",
                       "--ro-bind",
                       "/bin",
                       "/bin",
                       "--ro-bind",
                       "/lib",
                       "/lib",
                       "--ro-bind",
                       "/lib64",
                       "/lib64",
                       "--proc",
                       "/proc",
                       "--dev",
                       "/dev",
                       "--tmpfs",
                       "/tmp",
                       "--bind-fd",
                       "5",
                       (char *)grant,
                       "--remount-ro",
                       "/",
                       "/bin/true",
                       NULL };
      execvp (argv[0], argv);
      _exit (6);
    }
  int status;
  if (waitpid (pid, &status, 0) != pid || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return -1;
  return now_ms () - t0;
}

int
main (int argc, char **argv)
{
  if (argc != 3 || atoi (argv[2]) < 1)
    {
      fprintf (stderr, "usage: alone GRANT_FOLDER ROUNDS\n");
      return 2;
    }
  int rounds = atoi (argv[2]);
  double *t[2]
      = { calloc ((size_t)rounds, sizeof (double)), calloc ((size_t)rounds, sizeof (double)) };
  if (t[0] == NULL || t[1] == NULL)
    return 1;
  for (int r = 0; r < rounds; r++)
    for (int alone = 0; alone < 2; alone++)
      if ((t[alone][r] = one (argv[1], alone)) < 0)
        {
          fprintf (stderr, "a sandbox failed (round %d, %s)\n", r, alone ? "alone" : "plain");
          return 1;
        }
  for (int i = 0; i < 2; i++)
    qsort (t[i], (size_t)rounds, sizeof (double), by_value);
  double plain = t[0][rounds / 2], alone = t[1][rounds / 2];
  printf ("bare bwrap, one --bind-fd grant; medians of %d rounds, alternating\n", rounds);
  printf ("as before (recursive bind)         %6.2f ms\n", plain);
  printf ("with the source bound alone        %6.2f ms\n", alone);
  printf ("cost: %+.2f ms per sandbox, ratio %.3f\n", alone - plain, alone / plain);
  return 0;
}

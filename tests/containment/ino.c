/* SPDX-License-Identifier: Apache-2.0 */
/* The inotify program of shared_uid_limits.sh and sandbox_uid.sh.
 *
 *   ino one       makes one inotify instance and says whether it could.
 *   ino hold DIR  makes as many as it can, writes how many to DIR/took, and holds them
 *                 until DIR/release appears (at most 90 s). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "one") == 0)
    {
      int fd = inotify_init1 (IN_CLOEXEC);
      printf ("inotify: %s\n", fd < 0 ? strerror (errno) : "ok");
      return 0;
    }
  if (argc != 3 || strcmp (argv[1], "hold") != 0)
    return 2;
  char took[4096], release[4096];
  snprintf (took, sizeof took, "%s/took", argv[2]);
  snprintf (release, sizeof release, "%s/release", argv[2]);
  int n = 0, e = 0;
  while (n < 100000 && e == 0)
    if (inotify_init1 (IN_CLOEXEC) < 0)
      e = errno;
    else
      n++;
  FILE *f = fopen (took, "w");
  if (f == NULL)
    return 3;
  fprintf (f, "took %d (%s)\n", n, strerror (e));
  fclose (f);
  for (int i = 0; i < 900 && access (release, F_OK) != 0; i++)
    usleep (100000);
  printf ("held %d\n", n);
  return 0;
}

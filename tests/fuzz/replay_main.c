/* SPDX-License-Identifier: Apache-2.0 */
/* Without libFuzzer (a gcc build), a harness is linked to this driver, which feeds it every
 * file of the folders (or files) given on the command line once.  So the harness code is
 * built and run by every build, and its seed corpus doubles as a regression test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int
replay_file (const char *path)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    {
      perror (path);
      return -1;
    }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc (cap);
  size_t n;
  while (buf != NULL && (n = fread (buf + len, 1, cap - len, f)) > 0)
    {
      len += n;
      if (len == cap)
        buf = realloc (buf, cap *= 2);
    }
  fclose (f);
  if (buf == NULL)
    return -1;
  LLVMFuzzerTestOneInput (buf, len);
  free (buf);
  return 0;
}

int
main (int argc, char **argv)
{
  int files = 0;
  for (int i = 1; i < argc; i++)
    {
      struct stat st;
      if (stat (argv[i], &st) != 0)
        {
          perror (argv[i]);
          return 1;
        }
      if (!S_ISDIR (st.st_mode))
        {
          if (replay_file (argv[i]) != 0)
            return 1;
          files++;
          continue;
        }
      DIR *d = opendir (argv[i]);
      struct dirent *e;
      while (d != NULL && (e = readdir (d)) != NULL)
        {
          if (e->d_name[0] == '.')
            continue;
          char path[4096];
          snprintf (path, sizeof path, "%s/%s", argv[i], e->d_name);
          if (replay_file (path) != 0)
            return 1;
          files++;
        }
      if (d != NULL)
        closedir (d);
    }
  printf ("replayed %d inputs\n", files);
  return files > 0 ? 0 : 1;
}

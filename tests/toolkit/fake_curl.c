/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for curl that records how it was run and answers from fixtures, all named by
 * the environment:
 *
 *   FAKE_CURL_ARGV    file to write argv to, each argument followed by a NUL
 *   FAKE_CURL_STDOUT  file whose bytes go to standard output
 *   FAKE_CURL_STDERR  file whose bytes go to standard error
 *   FAKE_CURL_EXIT    exit status (default 0)
 *   FAKE_CURL_SIGNAL  a signal to die of, after the output */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
copy_file (const char *path, FILE *to)
{
  if (path == NULL)
    return;
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    {
      perror (path);
      exit (99);
    }
  char buf[65536];
  size_t n;
  while ((n = fread (buf, 1, sizeof buf, f)) > 0)
    fwrite (buf, 1, n, to);
  fclose (f);
  fflush (to);
}

int
main (int argc, char **argv)
{
  const char *record = getenv ("FAKE_CURL_ARGV");
  if (record != NULL)
    {
      FILE *f = fopen (record, "wb");
      if (f == NULL)
        {
          perror (record);
          return 99;
        }
      for (int i = 0; i < argc; i++)
        fwrite (argv[i], 1, strlen (argv[i]) + 1, f);
      fclose (f);
    }
  copy_file (getenv ("FAKE_CURL_STDOUT"), stdout);
  copy_file (getenv ("FAKE_CURL_STDERR"), stderr);
  const char *sig = getenv ("FAKE_CURL_SIGNAL");
  if (sig != NULL)
    {
      signal (atoi (sig), SIG_DFL);
      raise (atoi (sig));
    }
  const char *code = getenv ("FAKE_CURL_EXIT");
  return code != NULL ? atoi (code) : 0;
}

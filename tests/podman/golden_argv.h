/* SPDX-License-Identifier: Apache-2.0 */
/* Golden argument lists (libvirt's .argv test files, one argument per line): the program path
 * is written as @PODMAN@ so the files hold no path of the machine that made them.  With
 * BX_REGENERATE_GOLDEN=1 in the environment a mismatch rewrites the file instead of
 * failing, for a person to review in the diff. */
#ifndef BX_PODMAN_GOLDEN_H
#define BX_PODMAN_GOLDEN_H

#include "golden.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

/* How argv[0] appears in the files; another runtime's tests may name their own program. */
#ifndef GOLDEN_PROGRAM
#define GOLDEN_PROGRAM "@PODMAN@"
#endif

/* ARGV as golden text, with PROGRAM (argv[0]) shown as @PODMAN@, every occurrence of NAME
 * (when not NULL) as @NAME@, of the instance's token (NAME's last part) as @TOKEN@ and of
 * HOME (when not NULL) as @HOME@. */
static char *
golden_text (char *const *argv, const char *name, const char *home)
{
  const char *token = name != NULL ? strrchr (name, '-') : NULL;
  if (token != NULL && strlen (token + 1) == 12)
    token++;
  else
    token = NULL;
  size_t cap = 4096, len = 0;
  char *out = malloc (cap);
  out[0] = '\0';
  for (size_t i = 0; argv[i] != NULL; i++)
    {
      const char *arg = i == 0 ? GOLDEN_PROGRAM : argv[i];
      for (const char *p = arg; *p != '\0';)
        {
          const char *piece = p;
          size_t take = 1;
          if (name != NULL && strncmp (p, name, strlen (name)) == 0)
            {
              piece = "@NAME@";
              take = strlen (name);
            }
          else if (home != NULL && strncmp (p, home, strlen (home)) == 0)
            {
              piece = "@HOME@";
              take = strlen (home);
            }
          else if (token != NULL && strncmp (p, token, strlen (token)) == 0)
            {
              piece = "@TOKEN@";
              take = strlen (token);
            }
          size_t plen = piece == p ? 1 : strlen (piece);
          if (len + plen + 2 > cap)
            out = realloc (out, cap *= 2);
          memcpy (out + len, piece, plen);
          len += plen;
          p += take;
        }
      out[len++] = '\n';
      out[len] = '\0';
    }
  return out;
}

static void
golden_check_in (const char *file, char *const *argv, const char *name, const char *home)
{
  char *want_path = NULL;
  if (asprintf (&want_path, "%s/%s", GOLDEN_DIR, file) < 0)
    abort ();
  char *got = golden_text (argv, name, home);
  bx_golden_check (want_path, got);
  free (got);
  free (want_path);
}

static inline void
golden_check (const char *file, char *const *argv, const char *name)
{
  golden_check_in (file, argv, name, NULL);
}

#endif

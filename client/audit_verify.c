/* SPDX-License-Identifier: Apache-2.0 */
/* boxmaker audit verify: checks an audit log's hash chain (bx/audit_chain.h).
 *
 *   boxmaker audit verify [--prev HASH] FILE...
 *
 * The FILEs are one chain, oldest first (a rotated file before the one that followed it).
 * The first line whose "prev" is not the hash of the line before it is named, with its file
 * and line number.  Exit status: 0 the chain holds, 1 it breaks (or a line is not an audit
 * line), 2 usage or a file cannot be read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/audit_chain.h"
#include "bx/cleanup.h"

#include "audit_verify.h"

struct chain
{
  char head[BX_AUDIT_HASH_HEX + 1];  /* the hash of the last line checked */
  char first[BX_AUDIT_HASH_HEX + 1]; /* the first line's "prev" */
  bool started;
  unsigned long long lines;
};

/* 0: FILE's lines continue the chain; 1: a bad line (said); 2: FILE cannot be read. */
static int
verify_file (const char *file, struct chain *c)
{
  cleanup_fclose FILE *f = fopen (file, "re");
  if (f == NULL)
    {
      fprintf (stderr, "boxmaker: audit verify: cannot open %s: %s\n", file, strerror (errno));
      return 2;
    }
  cleanup_free char *line = NULL;
  size_t cap = 0;
  unsigned long long no = 0;
  ssize_t n;
  while ((n = getline (&line, &cap, f)) > 0)
    {
      no++;
      size_t len = (size_t)n;
      if (line[len - 1] != '\n')
        {
          printf ("%s:%llu: the line is cut short (no newline at its end)\n", file, no);
          return 1;
        }
      len--;
      char prev[BX_AUDIT_HASH_HEX + 1];
      if (bx_audit_line_prev (line, len, prev) < 0)
        {
          printf ("%s:%llu: not an audit line (a JSON object with a \"prev\" hash)\n", file, no);
          return 1;
        }
      if (!c->started)
        {
          if (c->first[0] != '\0' && strcmp (prev, c->first) != 0)
            {
              printf ("%s:%llu: the chain breaks: \"prev\" is not the hash given with --prev\n",
                      file, no);
              return 1;
            }
          memcpy (c->first, prev, sizeof prev);
          c->started = true;
        }
      else if (strcmp (prev, c->head) != 0)
        {
          printf ("%s:%llu: the chain breaks: \"prev\" is not the hash of the line before it "
                  "(that line was changed, or lines were removed or inserted here)\n",
                  file, no);
          return 1;
        }
      bx_audit_hash (line, len, c->head);
      c->lines++;
    }
  if (ferror (f))
    {
      fprintf (stderr, "boxmaker: audit verify: cannot read %s: %s\n", file, strerror (errno));
      return 2;
    }
  return 0;
}

static bool
valid_hash (const char *s)
{
  if (strlen (s) != BX_AUDIT_HASH_HEX)
    return false;
  for (; *s; s++)
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
      return false;
  return true;
}

int
bx_cmd_audit_verify (int argc, char **argv)
{
  struct chain c = { .first = "" };
  int i = 0;
  if (i < argc && strcmp (argv[i], "--prev") == 0)
    {
      if (i + 1 >= argc || !valid_hash (argv[i + 1]))
        {
          fputs ("boxmaker: audit verify: --prev needs a hash: 64 lowercase hex digits\n"
                 "Try 'boxmaker --help'.\n",
                 stderr);
          return 2;
        }
      memcpy (c.first, argv[i + 1], BX_AUDIT_HASH_HEX + 1);
      i += 2;
    }
  if (i >= argc)
    {
      fputs ("boxmaker: audit verify: give the audit log FILE (rotated files first)\n"
             "Try 'boxmaker --help'.\n",
             stderr);
      return 2;
    }
  for (; i < argc; i++)
    {
      int r = verify_file (argv[i], &c);
      if (r != 0)
        return r;
    }
  if (!c.started)
    {
      printf ("no lines: nothing to check\n");
      return 0;
    }
  printf ("%llu lines: the chain holds\n", c.lines);
  if (strcmp (c.first, BX_AUDIT_CHAIN_START) == 0)
    printf ("it starts a new chain\n");
  else
    printf ("it continues from %s\n", c.first);
  printf ("last line's hash: %s\n", c.head);
  return 0;
}

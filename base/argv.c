/* SPDX-License-Identifier: Apache-2.0 */
/* Argument lists: see bx/argv.h. */
#include <stdarg.h>
#include <stdlib.h>

#include "bx/argv.h"
#include "bx/cleanup.h"

void
bx_argv_push_owned (struct bx_argv *b, char *s)
{
  if (b->len + 2 > b->cap)
    {
      b->cap = b->cap ? b->cap * 2 : 32;
      b->items = bx_xrealloc (b->items, b->cap * sizeof (char *));
    }
  b->items[b->len++] = s;
  b->items[b->len] = NULL;
}

void
bx_argv_push (struct bx_argv *b, const char *s)
{
  bx_argv_push_owned (b, bx_xstrdup (s));
}

void
bx_argv_pushf (struct bx_argv *b, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *s = bx_xvasprintf (fmt, ap);
  va_end (ap);
  bx_argv_push_owned (b, s);
}

void
bx_argv_free (char **argv)
{
  if (argv == NULL)
    return;
  for (char **p = argv; *p != NULL; p++)
    free (*p);
  free (argv);
}

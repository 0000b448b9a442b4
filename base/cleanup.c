/* SPDX-License-Identifier: Apache-2.0 */
/* Cleanup attributes and the allocation policy: see bx/cleanup.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"

void
bx_cleanup_freep (void *p)
{
  void **pp = p;
  free (*pp);
}

void
bx_cleanup_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
}

void
bx_cleanup_fclosep (FILE **f)
{
  if (*f != NULL)
    fclose (*f);
}

void
bx_cleanup_errorp (bx_error *err)
{
  bx_error_free (err);
}

void
bx_out_of_memory (void)
{
  fputs ("boxmaker: out of memory\n", stderr);
  abort ();
}

static void *
oom (void)
{
  bx_out_of_memory ();
}

void *
bx_xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  return p ? p : oom ();
}

void *
bx_xzalloc (size_t n)
{
  void *p = calloc (1, n ? n : 1);
  return p ? p : oom ();
}

void *
bx_xrealloc (void *p, size_t n)
{
  void *q = realloc (p, n ? n : 1);
  return q ? q : oom ();
}

char *
bx_xstrdup (const char *s)
{
  char *d = strdup (s);
  return d ? d : oom ();
}

char *
bx_xstrndup (const char *s, size_t n)
{
  char *d = strndup (s, n);
  return d ? d : oom ();
}

char *
bx_xasprintf (const char *fmt, ...)
{
  char *s = NULL;
  va_list ap;
  va_start (ap, fmt);
  int r = vasprintf (&s, fmt, ap);
  va_end (ap);
  return r < 0 ? oom () : s;
}

char *
bx_xvasprintf (const char *fmt, va_list ap)
{
  char *s = NULL;
  return vasprintf (&s, fmt, ap) < 0 ? oom () : s;
}

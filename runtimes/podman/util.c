/* Allocation for podman.so.  The module keeps its own copies rather than linking the
 * project's static libraries, so that nothing but bx_runtime_entry is exported and no
 * other library's symbols are pulled into brokerd's address space twice. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podman.h"

/* Like brokerd's own allocator: a process that cannot allocate a few bytes cannot answer
 * anyway, and a half-handled NULL is worse. */
static void __attribute__ ((noreturn)) out_of_memory (void)
{
  static const char msg[] = "podman.so: out of memory\n";
  fwrite (msg, 1, sizeof msg - 1, stderr);
  abort ();
}

void *
bx_podman_xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (p == NULL)
    out_of_memory ();
  return p;
}

void *
bx_podman_xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    out_of_memory ();
  return p;
}

char *
bx_podman_xstrdup (const char *s)
{
  char *p = strdup (s);
  if (p == NULL)
    out_of_memory ();
  return p;
}

char *
bx_podman_xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  va_start (ap, fmt);
  int r = vasprintf (&s, fmt, ap);
  va_end (ap);
  if (r < 0)
    out_of_memory ();
  return s;
}

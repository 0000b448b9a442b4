/* SPDX-License-Identifier: Apache-2.0 */
/* Cleanup attributes and allocation helpers, so every early return is leak-free without a
 * ladder of gotos (crun and bubblewrap do the same).
 *
 *   cleanup_free char *s = bx_xstrdup (x);
 *   ...
 *   *out = steal_pointer (&s);   // hand over: the cleanup then frees NULL
 */
#ifndef BX_CLEANUP_H
#define BX_CLEANUP_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "bx/error.h"

void bx_cleanup_freep (void *p);
void bx_cleanup_closep (int *fd);
void bx_cleanup_fclosep (FILE **f);
void bx_cleanup_errorp (bx_error *err);

#define cleanup_free   __attribute__ ((cleanup (bx_cleanup_freep)))
#define cleanup_close  __attribute__ ((cleanup (bx_cleanup_closep)))
#define cleanup_fclose __attribute__ ((cleanup (bx_cleanup_fclosep)))
#define cleanup_error  __attribute__ ((cleanup (bx_cleanup_errorp)))

/* Returns *pp and sets *pp to NULL (or -1 for a file descriptor with steal_fd). */
#define steal_pointer(pp)                                                                          \
  __extension__({                                                                                  \
    __typeof__ (*(pp)) _bx_p = *(pp);                                                              \
    *(pp) = NULL;                                                                                  \
    _bx_p;                                                                                         \
  })
static inline int
steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}

/* The one place that decides what running out of memory does: print and abort.  A daemon
 * that cannot allocate a few bytes cannot answer anyway, and a half-handled NULL is worse. */
void bx_out_of_memory (void) __attribute__ ((noreturn));
#define BX_NONNULL_RESULT __attribute__ ((returns_nonnull))
void *bx_xmalloc (size_t n) BX_NONNULL_RESULT;
void *bx_xzalloc (size_t n) BX_NONNULL_RESULT;
void *bx_xrealloc (void *p, size_t n) BX_NONNULL_RESULT;
char *bx_xstrdup (const char *s) BX_NONNULL_RESULT;
char *bx_xstrndup (const char *s, size_t n) BX_NONNULL_RESULT;
char *bx_xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2))) BX_NONNULL_RESULT;
char *bx_xvasprintf (const char *fmt, va_list ap)
    __attribute__ ((format (printf, 1, 0))) BX_NONNULL_RESULT;

#endif

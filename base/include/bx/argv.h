/* SPDX-License-Identifier: Apache-2.0 */
/* Building an argument list one item at a time (the table-driven builders of podman.so and
 * bwrap.so): the list stays NULL-terminated after every push, and every item is owned. */
#ifndef BX_ARGV_H
#define BX_ARGV_H

#include <stddef.h>

struct bx_argv
{
  char **items; /* NULL-terminated once anything was pushed; hand it over, then bx_argv_free */
  size_t len, cap;
};

/* Appends S, which the list now owns. */
void bx_argv_push_owned (struct bx_argv *b, char *s);
/* Appends a copy of S. */
void bx_argv_push (struct bx_argv *b, const char *s);
/* Appends a formatted item. */
void bx_argv_pushf (struct bx_argv *b, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Frees a NULL-terminated list and its items; safe on NULL. */
void bx_argv_free (char **argv);

#endif

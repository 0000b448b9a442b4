/* SPDX-License-Identifier: Apache-2.0 */
/* Temporary trees and small file helpers for tests; each fails the test on trouble. */
#ifndef BX_TEST_TREE_H
#define BX_TEST_TREE_H

#include <stddef.h>

/* A new folder under $TMPDIR (or /tmp), mode 0700; free the name, remove_tree the folder. */
char *make_temp_dir (void);
/* Removes PATH and all it holds, without following symbolic links, whatever the modes. */
void remove_tree (const char *path);
void write_bytes (const char *path, const void *buf, size_t len);
/* The file's bytes with a NUL after them (*len, if not NULL, gets their count); NULL when the
 * file cannot be read. */
char *read_bytes (const char *path, size_t *len);
/* TEXT as the whole of PATH. */
void write_text (const char *path, const char *text);
/* PATH's text, or an empty string when it cannot be read (a log not yet written). */
char *read_text (const char *path);
char *str_printf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif

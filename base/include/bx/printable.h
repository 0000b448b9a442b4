/* SPDX-License-Identifier: Apache-2.0 */
/* Text from a peer or a config, made safe to put in a one-line message: the one helper every
 * reason, log line and error that quotes such text goes through. */
#ifndef BX_PRINTABLE_H
#define BX_PRINTABLE_H

#include <stdbool.h>
#include <stddef.h>

/* How much of a peer's text a message shows: a name (a tool, a field, a module), and a path
 * or a URL. */
#define BX_SHOWN_NAME_MAX 64
#define BX_SHOWN_TEXT_MAX 200

/* A new string holding the first MAX_SHOWN bytes of S (LEN bytes, may hold NUL), cut on a
 * character boundary: printable ASCII and well-formed UTF-8 stay; control bytes (C0, DEL and
 * C1), the characters a terminal reorders or breaks a line at (bx_utf8_reordering), '"', '\'
 * and bytes that are not UTF-8 become \xNN; "..." marks a cut.  So a message quoting it stays
 * one readable line of valid UTF-8 that reads as what it is, whatever the bytes were, and no
 * escape sequence reaches a terminal. */
char *bx_printable (const char *s, size_t len, size_t max_shown);

/* S (LEN bytes) made safe like bx_printable, but cut so that the whole result, "..."
 * included, takes at most MAX_OUT bytes (MAX_OUT >= 3), between two characters.  ASCII:
 * every byte but printable ASCII becomes \xNN, UTF-8 too (for text a person must read as
 * exactly what it is: no bidirectional controls, invisible or look-alike characters).  *CUT
 * (may be NULL) says whether it was cut. */
char *bx_printable_fit (const char *s, size_t len, size_t max_out, bool ascii, bool *cut);

/* The same made-safe text in double quotes: "..." around bx_printable (S, strlen (S), MAX). */
char *bx_quoted (const char *s, size_t max_shown);

/* S made one line, in place, for a log or a message that is text already (a module's log
 * line, a peer's reason): trailing newlines go, every other control byte (C0 and DEL)
 * becomes REPLACEMENT, and a text over MAX bytes (MAX >= 4) is cut on a character boundary
 * to end in "..." within MAX. */
void bx_one_line (char *s, size_t max, char replacement);

#endif

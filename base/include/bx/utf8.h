/* SPDX-License-Identifier: Apache-2.0 */
/* UTF-8 checks shared by toolkit (read_file refuses what is not UTF-8) and brokerd (tool
 * output is decoded with replacement before it goes into a JSON string). */
#ifndef BX_UTF8_H
#define BX_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
bool bx_utf8_valid (const char *s, size_t len);
/* A new copy (with a NUL after its end) where every invalid sequence becomes U+FFFD; NUL
 * bytes are valid UTF-8 and stay (json_stringn carries them as \u0000); *out_len gets the
 * length. */
char *bx_utf8_sanitize (const char *s, size_t len, size_t *out_len);

/* The length of the well-formed sequence at S (LEN > 0 bytes there), or 0 when none starts
 * there. */
size_t bx_utf8_sequence (const char *s, size_t len);
/* The most bytes of S (LEN bytes) at most MAX that end on a character boundary: the one cut
 * that never splits a character. */
size_t bx_utf8_cut (const char *s, size_t len, size_t max);

/* The code point of the well-formed sequence at S (N bytes) when a terminal obeys it rather
 * than shows it: a bidirectional control (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069) or a line or paragraph separator (U+2028, U+2029); else 0.  Text a person
 * reads (a log line, the audit line, a server's text shown to a model) escapes these, so that
 * it reads as what it is ("a<U+202E>txt.exe" is not "aexe.txt"). */
unsigned bx_utf8_reordering (const char *s, size_t n);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Compact JSON text written straight into one buffer, for the texts brokerd makes on every
 * call (the audit line, a run's canonical arguments): building a jansson object and dumping
 * it costs several times more.  The text is byte for byte what json_dumps makes of the same
 * values with JSON_COMPACT | JSON_PRESERVE_ORDER: members in the order written, jansson's
 * escapes (\" \\ \b \f \n \r \t, \u00XX in upper case for the other control bytes), slashes
 * and UTF-8 as they are.  Strings must be valid UTF-8; the writer does not check.
 *
 *   struct bx_json_text t;
 *   bx_json_text_open (&t);                 {
 *   bx_json_text_string (&t, "path", p);      "path":"..."
 *   bx_json_text_begin (&t, "args");          ,"args":{
 *   bx_json_text_end (&t);                    }
 *   char *text = bx_json_text_close (&t, &len);  }
 */
#ifndef BX_JSON_TEXT_H
#define BX_JSON_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct bx_json_text
{
  char *text;
  size_t len, cap;
  bool first; /* no member yet in the object being written */
  /* Set after open for a text people read in a terminal (the audit line): each
   * bidirectional control (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), each
   * line or paragraph separator (U+2028, U+2029), DEL and each C1 control (U+0080..U+009F)
   * is written as its \uXXXX escape, which a terminal shows rather than obeys.  The text then
   * differs from json_dumps' in those escapes only, and reads back to the same values. */
  bool escape_invisible;
};

/* Starts the text with the outer object's "{". */
void bx_json_text_open (struct bx_json_text *t);
/* Ends the outer object and hands its text over (NUL-terminated; *LEN, if not NULL, gets its
 * length). */
char *bx_json_text_close (struct bx_json_text *t, size_t *len);

/* Members of the object being written.  A NULL string is written as null. */
void bx_json_text_string (struct bx_json_text *t, const char *key, const char *value);
void bx_json_text_int (struct bx_json_text *t, const char *key, long long value);
/* VALUE when it is at least 0, else null. */
void bx_json_text_int_or_null (struct bx_json_text *t, const char *key, long long value);
void bx_json_text_bool (struct bx_json_text *t, const char *key, bool value);
/* VALUE as it is: a JSON text of its own. */
void bx_json_text_raw (struct bx_json_text *t, const char *key, const char *value);
/* An array of N strings. */
void bx_json_text_strings (struct bx_json_text *t, const char *key, const char *const *values,
                           size_t n);
/* A member that is an object: its members follow, then bx_json_text_end. */
void bx_json_text_begin (struct bx_json_text *t, const char *key);
void bx_json_text_end (struct bx_json_text *t);

#endif

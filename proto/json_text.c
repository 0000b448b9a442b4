/* SPDX-License-Identifier: Apache-2.0 */
/* Compact JSON text.  See bx/json_text.h. */
#include <string.h>

#include "bx/cleanup.h"
#include "bx/json_text.h"
#include "bx/utf8.h"

static void
put (struct bx_json_text *t, const char *s, size_t n)
{
  if (t->len + n + 1 > t->cap)
    {
      while (t->len + n + 1 > t->cap)
        t->cap *= 2;
      t->text = bx_xrealloc (t->text, t->cap);
    }
  memcpy (t->text + t->len, s, n);
  t->len += n;
  t->text[t->len] = '\0';
}

static void
put_cstr (struct bx_json_text *t, const char *s)
{
  put (t, s, strlen (s));
}

/* \uXXXX for CP, which is below 0x10000. */
static void
put_u_escape (struct bx_json_text *t, unsigned cp)
{
  static const char hex[] = "0123456789ABCDEF";
  char esc[6] = "\\u";
  for (int i = 0; i < 4; i++)
    esc[2 + i] = hex[(cp >> (12 - 4 * i)) & 0xfu];
  put (t, esc, sizeof esc);
}

/* The code point of the UTF-8 sequence at P if it is one escape_invisible escapes (its
 * length in *LEN), else 0.  S is valid UTF-8, so a lead byte's continuation bytes are there. */
static unsigned
invisible_at (const unsigned char *p, size_t *len)
{
  *len = 1;
  if (p[0] == 0x7f)
    return 0x7f;
  if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
    {
      *len = 2;
      return p[1];
    }
  size_t n = p[0] == 0xd8 ? 2 : 3;
  unsigned cp = bx_utf8_reordering ((const char *)p, n);
  if (cp != 0)
    *len = n;
  return cp;
}

/* S as a JSON string, escaped as jansson escapes (and, with escape_invisible, those code
 * points too), or null. */
static void
put_string (struct bx_json_text *t, const char *s)
{
  if (s == NULL)
    {
      put (t, "null", 4);
      return;
    }
  put (t, "\"", 1);
  const char *run = s;
  for (const char *p = s; *p != '\0'; p++)
    {
      unsigned char c = (unsigned char)*p;
      if (t->escape_invisible && (c == 0x7f || c == 0xc2 || c == 0xd8 || c == 0xe2))
        {
          size_t len;
          unsigned cp = invisible_at ((const unsigned char *)p, &len);
          if (cp != 0)
            {
              put (t, run, (size_t)(p - run));
              put_u_escape (t, cp);
              p += len - 1;
              run = p + 1;
              continue;
            }
        }
      if (c >= 0x20 && c != '"' && c != '\\')
        continue;
      put (t, run, (size_t)(p - run));
      run = p + 1;
      switch (c)
        {
        case '"':
          put (t, "\\\"", 2);
          break;
        case '\\':
          put (t, "\\\\", 2);
          break;
        case '\b':
          put (t, "\\b", 2);
          break;
        case '\f':
          put (t, "\\f", 2);
          break;
        case '\n':
          put (t, "\\n", 2);
          break;
        case '\r':
          put (t, "\\r", 2);
          break;
        case '\t':
          put (t, "\\t", 2);
          break;
        default:
          put_u_escape (t, c);
          break;
        }
    }
  put (t, run, strlen (run));
  put (t, "\"", 1);
}

/* VALUE in decimal: snprintf's format machinery costs more than the rest of a member. */
static void
put_int (struct bx_json_text *t, long long value)
{
  char digits[24];
  char *p = digits + sizeof digits;
  unsigned long long v = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
  do
    *--p = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  if (value < 0)
    *--p = '-';
  put (t, p, (size_t)(digits + sizeof digits - p));
}

static void
put_key (struct bx_json_text *t, const char *key)
{
  if (!t->first)
    put (t, ",", 1);
  t->first = false;
  put (t, "\"", 1);
  put_cstr (t, key);
  put (t, "\":", 2);
}

void
bx_json_text_open (struct bx_json_text *t)
{
  *t = (struct bx_json_text){ .cap = 256, .first = true };
  t->text = bx_xmalloc (t->cap);
  put (t, "{", 1);
}

char *
bx_json_text_close (struct bx_json_text *t, size_t *len)
{
  put (t, "}", 1);
  if (len != NULL)
    *len = t->len;
  char *text = t->text;
  t->text = NULL;
  return text;
}

void
bx_json_text_string (struct bx_json_text *t, const char *key, const char *value)
{
  put_key (t, key);
  put_string (t, value);
}

void
bx_json_text_int (struct bx_json_text *t, const char *key, long long value)
{
  put_key (t, key);
  put_int (t, value);
}

void
bx_json_text_int_or_null (struct bx_json_text *t, const char *key, long long value)
{
  if (value >= 0)
    bx_json_text_int (t, key, value);
  else
    bx_json_text_string (t, key, NULL);
}

void
bx_json_text_bool (struct bx_json_text *t, const char *key, bool value)
{
  put_key (t, key);
  put_cstr (t, value ? "true" : "false");
}

void
bx_json_text_raw (struct bx_json_text *t, const char *key, const char *value)
{
  put_key (t, key);
  put_cstr (t, value);
}

void
bx_json_text_strings (struct bx_json_text *t, const char *key, const char *const *values, size_t n)
{
  put_key (t, key);
  put (t, "[", 1);
  for (size_t i = 0; i < n; i++)
    {
      if (i > 0)
        put (t, ",", 1);
      put_string (t, values[i]);
    }
  put (t, "]", 1);
}

void
bx_json_text_begin (struct bx_json_text *t, const char *key)
{
  put_key (t, key);
  put (t, "{", 1);
  t->first = true;
}

void
bx_json_text_end (struct bx_json_text *t)
{
  put (t, "}", 1);
  t->first = false;
}

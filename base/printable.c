/* SPDX-License-Identifier: Apache-2.0 */
/* Text made safe for a one-line message: see bx/printable.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"
#include "bx/utf8.h"

/* The longest piece one character becomes: four bytes of UTF-8, each as \xNN. */
#define PIECE_MAX 16

/* The character at S (LEN > 0 bytes left) made safe into OUT (PIECE_MAX bytes): its length
 * there; *USED gets how many bytes of S it took.  A well-formed sequence is one piece, so a
 * cut never falls inside a character. */
static size_t
piece (const char *s, size_t len, bool ascii, char out[PIECE_MAX], size_t *used)
{
  unsigned char c = (unsigned char)s[0];
  size_t n = bx_utf8_sequence (s, len);
  /* U+0080..U+009F (C2 80..C2 9F) are controls too: some terminals act on them; so are the
   * characters a terminal reorders the line at. */
  bool c1 = c == 0xc2 && n == 2 && (unsigned char)s[1] < 0xa0;
  if (n > 1 && !c1 && !ascii && bx_utf8_reordering (s, n) == 0)
    {
      memcpy (out, s, n);
      *used = n;
      return n;
    }
  if (n > 1)
    {
      for (size_t k = 0; k < n; k++)
        snprintf (out + 4 * k, 5, "\\x%02x", (unsigned char)s[k]);
      *used = n;
      return 4 * n;
    }
  *used = 1;
  if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
    {
      out[0] = (char)c;
      return 1;
    }
  snprintf (out, 5, "\\x%02x", c);
  return 4;
}

char *
bx_printable (const char *s, size_t len, size_t max_shown)
{
  size_t shown = bx_utf8_cut (s, len, max_shown);
  char *out = bx_xmalloc (shown * 4 + 4);
  char *p = out;
  char one[PIECE_MAX];
  size_t used;
  for (size_t i = 0; i < shown; i += used)
    {
      size_t n = piece (s + i, shown - i, false, one, &used);
      memcpy (p, one, n);
      p += n;
    }
  if (shown < len)
    {
      memcpy (p, "...", 3);
      p += 3;
    }
  *p = '\0';
  return out;
}

char *
bx_printable_fit (const char *s, size_t len, size_t max_out, bool ascii, bool *cut)
{
  char one[PIECE_MAX];
  size_t used, whole = 0;
  for (size_t i = 0; i < len; i += used)
    whole += piece (s + i, len - i, ascii, one, &used);
  bool cutting = whole > max_out;
  size_t room = !cutting ? whole : max_out > 3 ? max_out - 3 : 0;
  char *out = bx_xmalloc (room + 4);
  size_t o = 0;
  for (size_t i = 0; i < len; i += used)
    {
      size_t n = piece (s + i, len - i, ascii, one, &used);
      if (o + n > room)
        break;
      memcpy (out + o, one, n);
      o += n;
    }
  if (cutting)
    {
      memcpy (out + o, "...", 3);
      o += 3;
    }
  out[o] = '\0';
  if (cut != NULL)
    *cut = cutting;
  return out;
}

char *
bx_quoted (const char *s, size_t max_shown)
{
  cleanup_free char *inner = bx_printable (s, strlen (s), max_shown);
  return bx_xasprintf ("\"%s\"", inner);
}
void
bx_one_line (char *s, size_t max, char replacement)
{
  size_t n = strlen (s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
    s[--n] = '\0';
  if (n > max)
    {
      n = bx_utf8_cut (s, n, max - 3);
      memcpy (s + n, "...", 4);
      n += 3;
    }
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
      s[i] = replacement;
}

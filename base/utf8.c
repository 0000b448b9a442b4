/* SPDX-License-Identifier: Apache-2.0 */
/* Strict UTF-8 (RFC 3629 / Unicode table 3-7) and the standard replacement: see bx/utf8.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/utf8.h"

/* Looks at the sequence starting at S[0] (LEN > 0 bytes available).  Returns true with *n set
 * to its length when it is a well-formed sequence.  Otherwise false with *n the length of its
 * maximal subpart (at least 1): the longest prefix that could start a well-formed sequence,
 * which the "substitution of maximal subparts" practice replaces by one U+FFFD. */
static bool
decode (const unsigned char *s, size_t len, size_t *n)
{
  unsigned char c = s[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
  if (c < 0x80)
    {
      *n = 1;
      return true;
    }
  else if (c >= 0xc2 && c <= 0xdf)
    need = 2;
  else if (c >= 0xe0 && c <= 0xef)
    {
      need = 3;
      if (c == 0xe0)
        lo = 0xa0; /* no overlong forms */
      else if (c == 0xed)
        hi = 0x9f; /* no surrogates */
    }
  else if (c >= 0xf0 && c <= 0xf4)
    {
      need = 4;
      if (c == 0xf0)
        lo = 0x90; /* no overlong forms */
      else if (c == 0xf4)
        hi = 0x8f; /* nothing above U+10FFFF */
    }
  else
    {
      /* 80..BF (a lone continuation), C0, C1 (overlong), F5..FF (out of range). */
      *n = 1;
      return false;
    }

  size_t i = 1;
  if (i >= len || s[i] < lo || s[i] > hi)
    {
      *n = 1;
      return false;
    }
  for (i = 2; i < need; i++)
    if (i >= len || s[i] < 0x80 || s[i] > 0xbf)
      {
        *n = i;
        return false;
      }
  *n = need;
  return true;
}

size_t
bx_utf8_sequence (const char *s, size_t len)
{
  size_t n;
  if (len == 0 || !decode ((const unsigned char *)s, len, &n))
    return 0;
  return n;
}

size_t
bx_utf8_cut (const char *s, size_t len, size_t max)
{
  if (len <= max)
    return len;
  size_t n = max;
  while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
    n--;
  return n;
}

bool
bx_utf8_valid (const char *s, size_t len)
{
  if (s == NULL)
    return len == 0;
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len)
    {
      /* ASCII runs are the common case; skip them a byte at a time without decode(). */
      if (p[i] < 0x80)
        {
          i++;
          continue;
        }
      size_t n;
      if (!decode (p + i, len - i, &n))
        return false;
      i += n;
    }
  return true;
}

char *
bx_utf8_sanitize (const char *s, size_t len, size_t *out_len)
{
  const unsigned char *p = (const unsigned char *)s;
  /* Each invalid byte becomes at most 3 bytes (EF BF BD); a maximal subpart of 1 byte is the
   * worst case, so 3 * len + 1 always fits.  No buffer that large can exist. */
  if (len > (SIZE_MAX - 1) / 3)
    bx_out_of_memory ();
  char *out = bx_xmalloc (len * 3 + 1);
  size_t o = 0, i = 0;
  while (i < len)
    {
      size_t n;
      if (decode (p + i, len - i, &n))
        {
          memcpy (out + o, p + i, n);
          o += n;
        }
      else
        {
          memcpy (out + o, "\xef\xbf\xbd", 3);
          o += 3;
        }
      i += n;
    }
  out[o] = '\0';
  if (out_len != NULL)
    *out_len = o;
  /* Give back what the worst case reserved when the text was (mostly) valid. */
  return bx_xrealloc (out, o + 1);
}

unsigned
bx_utf8_reordering (const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *)s;
  if (n == 2 && p[0] == 0xd8 && p[1] == 0x9c)
    return 0x061c;
  if (n != 3 || p[0] != 0xe2 || (p[1] != 0x80 && p[1] != 0x81))
    return 0;
  unsigned cp = 0x2000 | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
  if (cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e)
      || (cp >= 0x2066 && cp <= 0x2069))
    return cp;
  return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Text made safe for a one-line message: see bx/printable.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"
#include "bx/utf8.h"

char *
bx_printable (const char *s, size_t len, size_t max_shown)
{
  size_t shown = bx_utf8_cut (s, len, max_shown);
  char *out = bx_xmalloc (shown * 4 + 4);
  char *p = out;
  size_t i = 0;
  while (i < shown)
    {
      unsigned char c = (unsigned char)s[i];
      size_t n = bx_utf8_sequence (s + i, shown - i);
      /* U+0080..U+009F (C2 80..C2 9F) are controls too: some terminals act on them. */
      bool c1 = c == 0xc2 && n == 2 && (unsigned char)s[i + 1] < 0xa0;
      if (n > 1 && !c1)
        {
          memcpy (p, s + i, n);
          p += n;
          i += n;
          continue;
        }
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
        *p++ = (char)c;
      else
        p += sprintf (p, "\\x%02x", c);
      i++;
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

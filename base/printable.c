/* Text made safe for a one-line message: see bx/printable.h. */
#include <stdio.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

char *
bx_printable (const char *s, size_t len, size_t max_shown)
{
  size_t shown = len < max_shown ? len : max_shown;
  char *out = bx_xmalloc (shown * 4 + 4);
  char *p = out;
  for (size_t i = 0; i < shown; i++)
    {
      unsigned char c = (unsigned char)s[i];
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
        *p++ = (char)c;
      else
        p += sprintf (p, "\\x%02x", c);
    }
  if (shown < len)
    {
      memcpy (p, "...", 3);
      p += 3;
    }
  *p = '\0';
  return out;
}

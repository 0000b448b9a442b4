/* SPDX-License-Identifier: Apache-2.0 */
/* What toolkit writes: the model's text on standard output, toolkit's own trouble on
 * standard error. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "tools.h"

int
bx_toolkit_write (int fd, const void *buf, size_t len, bx_error *err)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t n = TEMP_FAILURE_RETRY (write (fd, p, len));
      if (n < 0)
        return bx_error_set (err, errno, "cannot write the output");
      p += n;
      len -= n;
    }
  return 0;
}

int
bx_toolkit_refuse (int out_fd, const char *tool, const char *subject, const char *reason)
{
  cleanup_error bx_error err = NULL;
  cleanup_free char *line = bx_xasprintf ("%s: %s: %s", tool, subject, reason);
  if (bx_toolkit_write (out_fd, line, strlen (line), &err) < 0)
    return bx_toolkit_misused ("%s", bx_error_msg (err));
  return BX_TOOLKIT_REFUSED;
}

const char *
bx_toolkit_reason (int errnum, char *buf, size_t size)
{
  snprintf (buf, size, "%s", strerror (errnum));
  /* strerror's texts start with a capital; after "path: " a lowercase reason reads as one
   * sentence, like the fixed reasons next to it. */
  if (buf[0] != '\0' && !(buf[0] == 'I' && buf[1] == '/'))
    buf[0] = (char)tolower ((unsigned char)buf[0]);
  return buf;
}

int
bx_toolkit_misused (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("toolkit: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  return BX_TOOLKIT_MISUSED;
}

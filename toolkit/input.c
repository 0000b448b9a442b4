/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a tool's arguments: all of standard input, bounded, then proto's strict parser. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "tools.h"

int
bx_toolkit_read_input (int fd, char **out, size_t *len, bx_error *err)
{
  /* One byte more than the limit, so "exactly the limit" and "more" can be told apart
   * without reading on for ever. */
  const size_t cap = BX_TOOL_ARGS_MAX + 1;
  size_t size = 64 * 1024, used = 0;
  cleanup_free char *buf = bx_xmalloc (size + 1);

  for (;;)
    {
      if (used == size)
        {
          size = size * 2 > cap ? cap : size * 2;
          buf = bx_xrealloc (buf, size + 1);
        }
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, buf + used, size - used));
      if (n < 0)
        return bx_error_set (err, errno, "cannot read the arguments");
      if (n == 0)
        break;
      used += n;
      if (used > BX_TOOL_ARGS_MAX)
        return bx_error_setc (err, EMSGSIZE, "the arguments are larger than %u bytes",
                              BX_TOOL_ARGS_MAX);
    }
  buf[used] = '\0';
  *len = used;
  *out = steal_pointer (&buf);
  return 0;
}

int
bx_toolkit_parse_input (enum bx_tool tool, const char *buf, size_t len, struct bx_tool_args *out,
                        bx_error *err)
{
  if (len > BX_TOOL_ARGS_MAX)
    return bx_error_setc (err, EMSGSIZE, "the arguments are larger than %u bytes",
                          BX_TOOL_ARGS_MAX);
  return bx_tool_args_parse (tool, buf, len, out, err);
}

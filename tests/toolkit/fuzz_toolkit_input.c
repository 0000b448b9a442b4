/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness for toolkit's argument reading path: the bytes arrive on a descriptor
 * as they would on standard input, are read with the 2 MiB bound, and parsed as each of the
 * four tools.  Whatever parses must survive a round trip through the canonical JSON that
 * brokerd writes, field for field. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "tools.h"

static int
same (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp (a, b) == 0);
}

static void
check_tool (enum bx_tool tool, const char *buf, size_t len)
{
  cleanup_error bx_error err = NULL;
  struct bx_tool_args args = { 0 };
  if (bx_toolkit_parse_input (tool, buf, len, &args, &err) < 0)
    {
      /* A refusal always says why. */
      if (bx_error_msg (err)[0] == '\0')
        abort ();
      return;
    }
  if (args.tool != tool)
    abort ();
  switch (tool)
    {
    case BX_TOOL_READ_FILE:
      if (args.path == NULL)
        abort ();
      break;
    case BX_TOOL_WRITE_FILE:
      if (args.path == NULL || args.content == NULL)
        abort ();
      break;
    case BX_TOOL_SHELL:
      if (args.command == NULL)
        abort ();
      break;
    case BX_TOOL_HTTP_FETCH:
      if (args.url == NULL)
        abort ();
      break;
    case BX_TOOL_MCP_CALL:
      abort (); /* proto never parses an internal tool's arguments */
    }

  size_t jlen;
  cleanup_free char *json = bx_tool_args_to_json (&args, &jlen);
  struct bx_tool_args again = { 0 };
  if (json == NULL || bx_toolkit_parse_input (tool, json, jlen, &again, &err) < 0)
    abort ();
  if (!same (args.path, again.path) || !same (args.content, again.content)
      || !same (args.command, again.command) || !same (args.cwd, again.cwd)
      || !same (args.url, again.url))
    abort ();
  bx_tool_args_clear (&again);
  bx_tool_args_clear (&args);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  cleanup_close int fd = memfd_create ("toolkit-input", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  cleanup_error bx_error err = NULL;
  if (bx_toolkit_write (fd, data, size, &err) < 0 || lseek (fd, 0, SEEK_SET) != 0)
    return 0;

  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (bx_toolkit_read_input (fd, &buf, &len, &err) < 0)
    {
      /* Only an input over the limit is refused by the read. */
      if (size <= BX_TOOL_ARGS_MAX)
        abort ();
      return 0;
    }
  if (len != size || memcmp (buf, data, size) != 0 || buf[len] != '\0')
    abort ();
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    if (!bx_tool_def ((enum bx_tool)t)->internal)
      check_tool ((enum bx_tool)t, buf, len);
  return 0;
}

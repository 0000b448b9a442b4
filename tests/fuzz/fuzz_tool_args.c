/* libFuzzer harness for the tool argument parser: any bytes a model might write, read as the
 * arguments of each of the four tools.  What parses must serialise to canonical JSON that
 * parses back to the same arguments and the same text. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bx/tool_args.h"

#define CHECK(c)                                                                                   \
  do                                                                                               \
    {                                                                                              \
      if (!(c))                                                                                    \
        abort ();                                                                                  \
    }                                                                                              \
  while (0)

static bool
same (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp (a, b) == 0);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    {
      struct bx_tool_args args;
      bx_error err = NULL;
      if (bx_tool_args_parse ((enum bx_tool)t, (const char *)data, size, &args, &err) < 0)
        {
          const char *name = bx_tool_name ((enum bx_tool)t);
          /* Every message names the tool first. */
          CHECK (strncmp (bx_error_msg (err), name, strlen (name)) == 0);
          bx_error_free (&err);
          continue;
        }
      CHECK (args.tool == (enum bx_tool)t);
      size_t len = 0;
      char *json = bx_tool_args_to_json (&args, &len);
      CHECK (json != NULL && len == strlen (json) && len <= BX_TOOL_ARGS_MAX);

      struct bx_tool_args again;
      CHECK (bx_tool_args_parse ((enum bx_tool)t, json, len, &again, &err) == 0);
      CHECK (same (args.path, again.path) && same (args.content, again.content)
             && same (args.command, again.command) && same (args.cwd, again.cwd)
             && same (args.url, again.url));
      char *json2 = bx_tool_args_to_json (&again, NULL);
      CHECK (json2 != NULL && strcmp (json, json2) == 0);

      /* The object form agrees with the text form. */
      json_t *obj = bx_tool_args_to_object (&args);
      struct bx_tool_args third;
      CHECK (obj != NULL && bx_tool_args_from_json ((enum bx_tool)t, obj, &third, &err) == 0);
      CHECK (same (args.path, third.path) && same (args.content, third.content)
             && same (args.command, third.command) && same (args.cwd, third.cwd)
             && same (args.url, third.url));
      json_decref (obj);
      free (json);
      free (json2);
      bx_tool_args_clear (&args);
      bx_tool_args_clear (&again);
      bx_tool_args_clear (&third);
    }
  return 0;
}

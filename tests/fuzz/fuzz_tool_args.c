/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness for the tool argument parser: any bytes a model might write, read as the
 * arguments of each tool (an internal one must refuse them all).  What parses must serialise to
 * canonical JSON that parses back to the same arguments and the same text.  Inputs starting with
 * 0x01 build the object directly instead (see build_object). */
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

/* An input starting with 0x01 (never the start of a JSON text) builds the object directly, as
 * a permissive frame parser could hand it to bx_tool_args_from_json: keys with NUL inside,
 * strings with NUL, every JSON type.  Records: kind, key length, key, value length, value. */
static json_t *
build_object (const uint8_t *data, size_t size)
{
  json_t *obj = json_object ();
  size_t i = 1;
  while (i + 2 <= size)
    {
      uint8_t kind = data[i++] % 7;
      size_t key_len = data[i++] % 16;
      if (i + key_len + 1 > size)
        break;
      const char *key = (const char *)data + i;
      i += key_len;
      size_t value_len = data[i++];
      if (i + value_len > size)
        value_len = size - i;
      const char *value = (const char *)data + i;
      i += value_len;
      json_t *v;
      switch (kind)
        {
        case 0:
        case 1:
          v = json_stringn (value, value_len); /* NULL unless valid UTF-8 */
          break;
        case 2:
          v = json_integer ((json_int_t)value_len);
          break;
        case 3:
          v = json_null ();
          break;
        case 4:
          v = json_true ();
          break;
        case 5:
          v = json_array ();
          break;
        default:
          v = json_object ();
          break;
        }
      if (v != NULL)
        json_object_setn_new (obj, key, key_len, v);
    }
  return obj;
}

static void
check_object (const json_t *obj)
{
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    {
      struct bx_tool_args args;
      bx_error err = NULL;
      /* An internal tool's arguments are brokerd's own: nothing a model writes parses. */
      if (bx_tool_def ((enum bx_tool)t)->internal)
        {
          CHECK (bx_tool_args_from_json ((enum bx_tool)t, obj, &args, &err) < 0);
          bx_error_free (&err);
          continue;
        }
      if (bx_tool_args_from_json ((enum bx_tool)t, obj, &args, &err) < 0)
        {
          const char *name = bx_tool_name ((enum bx_tool)t);
          CHECK (strncmp (bx_error_msg (err), name, strlen (name)) == 0);
          bx_error_free (&err);
          continue;
        }
      /* What got through has no NUL and round-trips through the canonical text. */
      size_t len = 0;
      char *json = bx_tool_args_to_json (&args, &len);
      CHECK (json != NULL);
      struct bx_tool_args again;
      CHECK (bx_tool_args_parse ((enum bx_tool)t, json, len, &again, &err) == 0);
      CHECK (same (args.path, again.path) && same (args.content, again.content)
             && same (args.command, again.command) && same (args.cwd, again.cwd)
             && same (args.url, again.url));
      free (json);
      bx_tool_args_clear (&args);
      bx_tool_args_clear (&again);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > 0 && data[0] == 0x01)
    {
      json_t *obj = build_object (data, size);
      check_object (obj);
      json_decref (obj);
      return 0;
    }
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    {
      struct bx_tool_args args;
      bx_error err = NULL;
      if (bx_tool_def ((enum bx_tool)t)->internal)
        {
          CHECK (bx_tool_args_parse ((enum bx_tool)t, (const char *)data, size, &args, &err) < 0);
          bx_error_free (&err);
          continue;
        }
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

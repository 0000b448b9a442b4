/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness for the frame reader and the envelope parser: any bytes a peer might send.
 * A frame that decodes must encode and decode back to the same object; a frame read from a
 * pipe must give the same answer as the same bytes decoded from memory. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "bx/tool_args.h"

#define CHECK(c)                                                                                   \
  do                                                                                               \
    {                                                                                              \
      if (!(c))                                                                                    \
        abort ();                                                                                  \
    }                                                                                              \
  while (0)

static void
check_message (const json_t *obj)
{
  struct bx_envelope env;
  bx_error err = NULL;
  if (bx_envelope_parse (obj, &env, &err) < 0)
    {
      CHECK (err != NULL);
      bx_error_free (&err);
      return;
    }
  bx_valid_id (env.id);
  if (env.type != BX_MSG_TOOL_REQUEST)
    return;
  enum bx_tool tool;
  if (bx_tool_from_name (env.u.request.tool, &tool) < 0)
    return;
  struct bx_tool_args args;
  if (bx_tool_args_from_json (tool, env.u.request.arguments, &args, &err) < 0)
    {
      bx_error_free (&err);
      return;
    }
  char *json = bx_tool_args_to_json (&args, NULL);
  CHECK (json != NULL);
  free (json);
  bx_tool_args_clear (&args);
}

/* Reads DATA through a pipe as a peer would send it; the first frame must agree with
 * bx_frame_decode of the same leading bytes. */
static void
check_read_path (const uint8_t *data, size_t size)
{
  int p[2];
  if (size > 60000 || pipe2 (p, O_CLOEXEC) != 0)
    return;
  bx_error err = NULL;
  if (size > 0 && bx_write_full (p[1], data, size, bx_deadline_in (1000), &err) < 0)
    {
      bx_error_free (&err);
      close (p[0]);
      close (p[1]);
      return;
    }
  close (p[1]);
  json_t *got = NULL;
  int r = bx_frame_read (p[0], bx_deadline_in (1000), &got, &err);
  if (r == 0)
    {
      /* The bytes the reader consumed form a frame that decodes to the same object. */
      uint32_t n
          = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
      json_t *again = NULL;
      CHECK (bx_frame_decode (data, 4 + (size_t)n, &again, &err) == 0);
      CHECK (json_equal (got, again));
      json_decref (again);
      json_decref (got);
    }
  else
    {
      CHECK (err != NULL);
      CHECK (bx_error_code (err) != BX_FRAME_TIMED_OUT);
      bx_error_free (&err);
    }
  close (p[0]);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  json_t *obj = NULL;
  bx_error err = NULL;
  check_read_path (data, size);
  if (bx_frame_decode (data, size, &obj, &err) < 0)
    {
      CHECK (err != NULL && obj == NULL);
      bx_error_free (&err);
      return 0;
    }
  CHECK (json_is_object (obj));
  check_message (obj);

  /* Encode and decode again: the same object. */
  size_t n = json_dumpb (obj, NULL, 0, JSON_COMPACT);
  CHECK (n > 0 && n <= BX_FRAME_MAX + 64);
  uint8_t *buf = malloc (n + 4);
  CHECK (json_dumpb (obj, (char *)buf + 4, n, JSON_COMPACT) == n);
  buf[0] = (uint8_t)(n >> 24);
  buf[1] = (uint8_t)(n >> 16);
  buf[2] = (uint8_t)(n >> 8);
  buf[3] = (uint8_t)n;
  json_t *again = NULL;
  if (n <= BX_FRAME_MAX)
    {
      CHECK (bx_frame_decode (buf, n + 4, &again, &err) == 0);
      CHECK (json_equal (obj, again));
      json_decref (again);
    }
  free (buf);
  json_decref (obj);
  return 0;
}

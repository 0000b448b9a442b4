/* SPDX-License-Identifier: Apache-2.0 */
/* bx_client_grants: one grants_request, one grants answer (docs/protocol.md, "What a peer
 * was granted").  See boxmaker/client.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "bx/tools.h"

#include <boxmaker/client.h>

#include "connect.h"

/* The id of the request: one request per connection, so any valid id does. */
#define GRANTS_ID "grants"

static bool
is_tool_name (const json_t *j)
{
  enum bx_tool t;
  return json_is_string (j) && bx_tool_from_name (json_string_value (j), &t) == 0;
}

/* Whether G has the fields docs/protocol.md lists, of their types: a front end builds text
 * for its model from them, and must not build it from something else. */
static bool
grant_well_formed (const json_t *g)
{
  const json_t *tools = json_object_get (g, "tools");
  const json_t *folders = json_object_get (g, "folders");
  const json_t *hosts = json_object_get (g, "hosts");
  if (!json_is_object (g) || !json_is_integer (json_object_get (g, "grant"))
      || !json_is_array (tools) || !json_is_array (folders) || !json_is_array (hosts)
      || !json_is_string (json_object_get (g, "class"))
      || !json_is_boolean (json_object_get (g, "untrusted"))
      || !json_is_boolean (json_object_get (g, "approval")))
    return false;
  for (size_t i = 0; i < json_array_size (tools); i++)
    if (!is_tool_name (json_array_get (tools, i)))
      return false;
  for (size_t i = 0; i < json_array_size (folders); i++)
    {
      const json_t *f = json_array_get (folders, i);
      if (!json_is_string (json_object_get (f, "path"))
          || !json_is_boolean (json_object_get (f, "writable")))
        return false;
    }
  for (size_t i = 0; i < json_array_size (hosts); i++)
    if (!json_is_string (json_array_get (hosts, i)))
      return false;
  return true;
}

int
bx_client_grants (const struct bx_client_options *opts, json_t **grants, bx_error *err)
{
  *grants = NULL;
  const char *path = opts->socket ? opts->socket : BX_CLIENT_DEFAULT_SOCKET;
  uint64_t timeout_ms = opts->timeout_ms ? opts->timeout_ms : BX_CLIENT_DEFAULT_TIMEOUT_MS;
  int64_t now = bx_now_ms ();
  if (timeout_ms >= (uint64_t)(BX_NO_DEADLINE - now))
    return bx_error_setc (err, EINVAL, "the timeout is too large (%llu ms)",
                          (unsigned long long)timeout_ms);
  int64_t deadline = now + (int64_t)timeout_ms;

  enum bx_client_exit stage;
  cleanup_error bx_error e = NULL;
  cleanup_close int fd = bx_client_connect (path, deadline, &stage, &e);
  if (fd < 0)
    return bx_error_setc (err, bx_error_code (e), "cannot connect to %s: %s", path,
                          bx_error_msg (e));
  json_auto_t *request = bx_msg_grants_request (GRANTS_ID);
  if (bx_frame_write (fd, request, deadline, &e) < 0)
    return bx_error_setc (err, bx_error_code (e), "cannot send the request: %s", bx_error_msg (e));
  json_auto_t *frame = NULL;
  if (bx_frame_read (fd, deadline, &frame, &e) < 0)
    return bx_error_setc (err, bx_error_code (e), "no answer: %s", bx_error_msg (e));
  struct bx_envelope env;
  if (bx_envelope_parse (frame, &env, &e) < 0)
    return bx_error_setc (err, EBADMSG, "bad answer: %s", bx_error_msg (e));
  /* A brokerd older than the request refuses it as an unexpected message: say so plainly. */
  if (env.type == BX_MSG_ERROR)
    return bx_error_setc (err, EPROTO, "the broker reported an error: %s", env.u.error.text);
  if (env.v != BX_PROTOCOL_VERSION || strcmp (env.id, GRANTS_ID) != 0 || !env.final
      || env.type != BX_MSG_GRANTS)
    return bx_error_setc (err, EBADMSG, "bad answer: expected one final grants frame");
  const json_t *list = env.u.grants.list;
  for (size_t i = 0; i < json_array_size (list); i++)
    if (!grant_well_formed (json_array_get (list, i)))
      return bx_error_setc (err, EBADMSG, "bad answer: grant %zu is malformed", i + 1);
  *grants = json_incref ((json_t *)env.u.grants.list);
  return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* One JSON-RPC 2.0 message, read as strictly as the MCP specification asks: see mcp.h.
 * Everything here sees bytes a client wrote; tests/mcp/fuzz_mcp_request.c fuzzes it. */
#include <string.h>

#include "mcp.h"

static void
invalid (struct bx_mcp_message *m, int code, const char *text)
{
  m->kind = BX_MCP_INVALID;
  m->error_code = code;
  m->error_text = text;
}

/* MCP: "the ID MUST NOT be null", and it is a string or an integer. */
static bool
good_id (const json_t *id)
{
  return json_is_string (id) || json_is_integer (id);
}

void
bx_mcp_parse (const char *text, size_t len, struct bx_mcp_message *m)
{
  memset (m, 0, sizeof *m);
  json_error_t jerr;
  /* Duplicate keys refused, as in brokerd's frames: two readers that keep the first or the
   * last "name" would disagree about which tool was called. */
  json_auto_t *root = json_loadb (text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
  if (root == NULL)
    return invalid (m, BX_MCP_PARSE_ERROR, "Parse error: the message is not valid JSON");
  if (json_is_array (root) && json_array_size (root) > 0)
    {
      /* Whether the session's revision takes a batch is the server's to say. */
      m->kind = BX_MCP_BATCH;
      m->root = json_incref (root);
      return;
    }
  bx_mcp_check (root, m);
}

void
bx_mcp_check (json_t *root, struct bx_mcp_message *m)
{
  memset (m, 0, sizeof *m);
  m->root = json_incref (root);
  /* JSON-RPC 2.0: an empty batch is one Invalid Request, and so is a member that is not an
   * object (each answered on its own, id null). */
  if (json_is_array (m->root))
    return invalid (m, BX_MCP_INVALID_REQUEST,
                    json_array_size (m->root) == 0
                        ? "Invalid Request: an empty batch"
                        : "Invalid Request: a batch member must be one message, not a batch");
  if (!json_is_object (m->root))
    return invalid (m, BX_MCP_INVALID_REQUEST, "Invalid Request: the message must be an object");

  json_t *id = json_object_get (m->root, "id");
  if (good_id (id))
    m->id = id;
  const char *version = json_string_value (json_object_get (m->root, "jsonrpc"));
  if (version == NULL || strcmp (version, "2.0") != 0)
    return invalid (m, BX_MCP_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");

  json_t *method = json_object_get (m->root, "method");
  if (method == NULL)
    {
      if (json_object_get (m->root, "result") != NULL || json_object_get (m->root, "error") != NULL)
        {
          m->kind = BX_MCP_RESPONSE;
          return;
        }
      return invalid (m, BX_MCP_INVALID_REQUEST, "Invalid Request: no \"method\"");
    }
  if (!json_is_string (method))
    return invalid (m, BX_MCP_INVALID_REQUEST, "Invalid Request: \"method\" must be a string");
  if (id != NULL && !good_id (id))
    return invalid (m, BX_MCP_INVALID_REQUEST,
                    "Invalid Request: \"id\" must be a string or an integer");
  json_t *params = json_object_get (m->root, "params");
  if (params != NULL && !json_is_object (params))
    {
      /* Only a request can be told; a notification's error has nobody to go to. */
      if (id != NULL)
        return invalid (m, BX_MCP_INVALID_PARAMS, "Invalid params: \"params\" must be an object");
      return invalid (m, BX_MCP_INVALID_REQUEST, "Invalid Request: \"params\" must be an object");
    }
  m->method = json_string_value (method);
  m->params = params;
  m->kind = id != NULL ? BX_MCP_REQUEST : BX_MCP_NOTIFICATION;
}

void
bx_mcp_message_clear (struct bx_mcp_message *m)
{
  json_decref (m->root);
  memset (m, 0, sizeof *m);
}

json_t *
bx_mcp_result (json_t *id, json_t *result)
{
  return json_pack ("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null (), "result",
                    result);
}

json_t *
bx_mcp_error (json_t *id, int code, const char *message)
{
  json_t *e = json_pack ("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null (),
                         "error", "code", code, "message", message);
  if (e != NULL)
    return e;
  /* A message that is not UTF-8 must not cost the client its answer. */
  return json_pack ("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null (),
                    "error", "code", code, "message", "Internal error");
}

json_t *
bx_mcp_notification (const char *method, json_t *params)
{
  return json_pack ("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params);
}

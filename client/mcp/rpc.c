/* SPDX-License-Identifier: Apache-2.0 */
/* One JSON-RPC 2.0 message, read as strictly as the MCP specification asks: see mcp.h.
 * Everything here sees bytes a client wrote; tests/mcp/fuzz_mcp_request.c fuzzes it. */
#include <stdio.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "mcp.h"

/* Every valid JSON text is read: a string may hold U+0000 (it is refused below, with the
 * request's id, where it would be used), and duplicate keys are refused, as in brokerd's
 * frames: two readers that keep the first or the last "name" would disagree about which
 * tool was called. */
#define LOAD_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL)

/* jansson cannot hold U+0000 in an object key.  Such a key is read as KEY_NUL instead (a
 * noncharacter, which no client has a use for in a key), and a key holding it is refused as
 * one holding U+0000. */
#define KEY_NUL      "\\uFFFF"
#define KEY_NUL_UTF8 "\xef\xbf\xbf"

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

/* TEXT with each \u0000 escape inside an object key written KEY_NUL (the same length), for
 * a text jansson refused for such a key.  Free it. */
static char *
keys_without_nul (const char *text, size_t len)
{
  char *copy = bx_xmalloc (len + 1);
  memcpy (copy, text, len);
  copy[len] = '\0';
  size_t start = 0; /* the string being read: where its opening quote is */
  bool in_string = false, has_nul = false;
  for (size_t i = 0; i < len; i++)
    {
      if (!in_string)
        {
          if (copy[i] == '"')
            {
              in_string = true;
              has_nul = false;
              start = i;
            }
          continue;
        }
      if (copy[i] == '\\')
        {
          if (i + 5 < len && memcmp (copy + i + 1, "u0000", 5) == 0)
            has_nul = true;
          i++; /* the escaped character (the digits of a \u escape need no care) */
          continue;
        }
      if (copy[i] != '"')
        continue;
      in_string = false;
      size_t next = i + 1;
      while (next < len && strchr (" \t\r\n", copy[next]) != NULL)
        next++;
      if (!has_nul || next == len || copy[next] != ':')
        continue; /* a value, not a key */
      for (size_t k = start + 1; k + 5 < i; k++)
        if (copy[k] == '\\' && memcmp (copy + k + 1, "u0000", 5) == 0)
          memcpy (copy + k, KEY_NUL, 6);
        else if (copy[k] == '\\')
          k++;
    }
  return copy;
}

void
bx_mcp_parse (const char *text, size_t len, struct bx_mcp_message *m)
{
  memset (m, 0, sizeof *m);
  json_error_t jerr;
  json_auto_t *root = json_loadb (text, len, LOAD_FLAGS, &jerr);
  if (root == NULL && json_error_code (&jerr) == json_error_null_byte_in_key)
    {
      cleanup_free char *copy = keys_without_nul (text, len);
      root = json_loadb (copy, len, LOAD_FLAGS, &jerr);
    }
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

static bool
holds_nul (const json_t *s)
{
  return memchr (json_string_value (s), '\0', json_string_length (s)) != NULL;
}

/* Appends "NAME" to PATH (dotted, "[N]" for an array member), cut at its size; returns the
 * old length, to restore. */
static size_t
path_push (char *path, size_t cap, const char *name, bool index)
{
  size_t old = strlen (path);
  snprintf (path + old, cap - old, index ? "[%s]" : old > 0 ? ".%s" : "%s", name);
  return old;
}

/* Whether V holds U+0000 in a string or in a key (read as KEY_NUL); PATH (CAP bytes, holding
 * V's path) then names where.  Where a string goes (a path, a command, a tool's name, a
 * revision) it is a C string, and U+0000 would silently cut it into another one. */
static bool
nul_in (const json_t *v, char *path, size_t cap)
{
  if (json_is_string (v))
    return holds_nul (v);
  const char *key;
  json_t *member;
  size_t i;
  if (json_is_object (v))
    json_object_foreach ((json_t *)v, key, member)
    {
      bool nul_key = strstr (key, KEY_NUL_UTF8) != NULL;
      cleanup_free char *shown = bx_printable (key, strlen (key), 32);
      size_t old = path_push (path, cap, nul_key ? "(a key)" : shown, false);
      if (nul_key || nul_in (member, path, cap))
        return true;
      path[old] = '\0';
    }
  if (json_is_array (v))
    json_array_foreach (v, i, member)
    {
      char n[24];
      snprintf (n, sizeof n, "%zu", i);
      size_t old = path_push (path, cap, n, true);
      if (nul_in (member, path, cap))
        return true;
      path[old] = '\0';
    }
  return false;
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
  if (version == NULL || strcmp (version, "2.0") != 0
      || json_string_length (json_object_get (m->root, "jsonrpc")) != 3)
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
  if (holds_nul (method))
    return invalid (m, BX_MCP_INVALID_REQUEST, "Invalid Request: \"method\" holds U+0000");
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
  /* A notification's params are only compared (a cancelled request's id), never used as C
   * strings: a NUL there does no harm, and refusing it would lose a cancellation. */
  char path[96] = "";
  if (id != NULL && params != NULL && nul_in (params, path, sizeof path))
    {
      /* Refused whole, not passed on with the NUL dropped or the string cut: either would
       * make it name another path or command than the one sent. */
      snprintf (m->text, sizeof m->text,
                "Invalid params: \"%s\" holds U+0000 (a NUL character), refused rather than cut "
                "short",
                path);
      return invalid (m, BX_MCP_INVALID_PARAMS, m->text);
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

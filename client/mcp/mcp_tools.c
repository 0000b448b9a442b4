/* SPDX-License-Identifier: Apache-2.0 */
/* The tools as MCP tools, from proto's tool table (bx/tools.h): the name, the title, the
 * description and the behaviour hints of each row, and the inputSchema made from its fields
 * (bx_tool_args_schema), the one definition brokerd and toolkit parse arguments with. */
#include <string.h>

#include "bx/cleanup.h"
#include "bx/tool_args.h"

#include "mcp.h"

/* A place among the servers' tools of the grants: a grant's index and one of its tools'. */
struct tool_at
{
  size_t grant, tool;
};

/* The servers' tool at *AT (start at { 0 }) with its grant in *GRANT, moving AT past it, in
 * the order of the grants and their mcp_tools; NULL past the last. */
static const json_t *
next_server_tool (const json_t *grants, struct tool_at *at, const json_t **grant)
{
  for (; at->grant < json_array_size (grants); at->grant++, at->tool = 0)
    {
      const json_t *g = json_array_get (grants, at->grant);
      const json_t *tool = json_array_get (json_object_get (g, "mcp_tools"), at->tool);
      if (tool != NULL)
        {
          at->tool++;
          *grant = g;
          return tool;
        }
    }
  return NULL;
}

json_t *
bx_mcp_tools_list (const struct bx_mcp_version *v, const json_t *grants)
{
  json_t *tools = json_array ();
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    {
      const struct bx_tool_def *def = bx_tool_def ((enum bx_tool)t);
      if (def->internal)
        continue;
      /* Only the tools some grant allows, each telling where: a tool the model cannot use is
       * one it should not try.  The description stays one string in every revision. */
      cleanup_free char *granted = grants ? bx_mcp_grants_text (grants, (enum bx_tool)t) : NULL;
      if (grants != NULL && granted == NULL)
        continue;
      json_t *tool = json_pack ("{s:s, s:s++, s:o}", "name", def->name, "description",
                                def->description, granted ? " " : "", granted ? granted : "",
                                "inputSchema", bx_tool_args_schema ((enum bx_tool)t));
      if (v->titles)
        json_object_set_new (tool, "title", json_string (def->title));
      /* ToolAnnotations has had its own title since it came (2025-03-26). */
      if (v->annotations)
        json_object_set_new (tool, "annotations",
                             json_pack ("{s:s, s:b, s:b, s:b, s:b}", "title", def->title,
                                        "readOnlyHint", def->read_only, "destructiveHint",
                                        def->destructive, "idempotentHint", def->idempotent,
                                        "openWorldHint", def->open_world));
      json_array_append_new (tools, tool);
    }
  /* Then the owner's MCP servers' tools, as brokerd listed them. */
  const json_t *g;
  const json_t *tool;
  for (struct tool_at at = { 0 }; (tool = next_server_tool (grants, &at, &g)) != NULL;)
    {
      if (!bx_mcp_server_tool_offered (grants, tool))
        continue;
      json_t *offered = json_deep_copy (tool);
      if (!v->titles)
        json_object_del (offered, "title");
      if (!v->annotations)
        json_object_del (offered, "annotations");
      json_array_append_new (tools, offered);
    }
  return json_pack ("{s:o}", "tools", tools);
}

/* Whether TOOL, offered by grant G, is one this front end may offer as NAME: a name of G's own
 * server's (SERVER.TOOL with SERVER its mcp_server), not one of the four, with a description
 * and a schema of the types MCP says. */
static bool
server_tool_well_formed (const json_t *g, const json_t *tool, const char *name)
{
  const char *server = json_string_value (json_object_get (g, "mcp_server"));
  size_t n = server != NULL ? strlen (server) : 0;
  const json_t *description = json_object_get (tool, "description");
  return n > 0 && strncmp (name, server, n) == 0 && name[n] == '.' && name[n + 1] != '\0'
         && !bx_mcp_tool_known (name) && json_is_object (json_object_get (tool, "inputSchema"))
         && (description == NULL || json_is_string (description));
}

/* The first entry of the servers' tools named NAME, its grant in *GRANT, or NULL. */
static const json_t *
first_server_tool (const json_t *grants, const char *name, const json_t **grant)
{
  const json_t *tool;
  for (struct tool_at at = { 0 }; (tool = next_server_tool (grants, &at, grant)) != NULL;)
    {
      const char *tool_name = json_string_value (json_object_get (tool, "name"));
      if (tool_name != NULL && strcmp (tool_name, name) == 0)
        return tool;
    }
  return NULL;
}

const json_t *
bx_mcp_server_tool_grant (const json_t *grants, const char *name)
{
  /* The first entry of that name wins; a later one (a second grant claiming the same server)
   * is never offered nor called. */
  const json_t *g;
  const json_t *tool = first_server_tool (grants, name, &g);
  return tool != NULL && server_tool_well_formed (g, tool, name) ? g : NULL;
}

bool
bx_mcp_server_tool_offered (const json_t *grants, const json_t *tool)
{
  const char *name = json_string_value (json_object_get (tool, "name"));
  const json_t *g;
  return name != NULL && first_server_tool (grants, name, &g) == tool
         && server_tool_well_formed (g, tool, name);
}

bool
bx_mcp_tool_known (const char *name)
{
  enum bx_tool t;
  return bx_tool_from_name (name, &t) == 0;
}

/* OpenAI's strict function calling sends every field, null for the ones not meant: only
 * here, at the MCP adapter, does an optional field sent as null count as absent.  brokerd
 * and proto stay strict (null is not a string). */
json_t *
bx_mcp_tool_arguments (const char *name, const json_t *arguments)
{
  enum bx_tool t;
  if (bx_tool_from_name (name, &t) < 0)
    return NULL;
  json_t *copy = json_copy ((json_t *)arguments);
  json_t *schema = bx_tool_args_schema (t);
  json_t *required = json_object_get (schema, "required");
  json_t *properties = json_object_get (schema, "properties");
  const char *key;
  json_t *value;
  void *tmp;
  json_object_foreach_safe (copy, tmp, key, value)
  {
    if (!json_is_null (value) || json_object_get (properties, key) == NULL)
      continue;
    bool is_required = false;
    size_t i;
    json_t *r;
    json_array_foreach (required, i, r) if (strcmp (json_string_value (r), key) == 0) is_required
        = true;
    if (!is_required)
      json_object_del (copy, key);
  }
  json_decref (schema);
  return copy;
}

static json_t *
text_result (const char *outcome, const char *prefix, const char *text, bool is_error)
{
  json_t *content = json_pack ("[{s:s, s:s+}]", "type", "text", "text", prefix, text);
  return json_pack ("{s:o, s:b, s:{s:s}}", "content", content, "isError", is_error, "_meta",
                    BX_MCP_META "outcome", outcome);
}

/* A server's tools/call result (brokerd's content: the result as JSON text) passed on with
 * LABELS: its content blocks, structuredContent and isError; the labels replace any _meta of
 * the server's, so it cannot pass for another class.  NULL when the text is not such a result
 * (cut short, or toolkit's refusal sentence): it is then passed on as text. */
static json_t *
server_result (const struct bx_client_response *r, const struct bx_mcp_version *v,
               const json_t *labels)
{
  if (r->truncated)
    return NULL;
  json_auto_t *parsed = json_loadb (r->content, r->content_len, 0, NULL);
  const json_t *content = json_object_get (parsed, "content");
  if (!json_is_array (content))
    return NULL;
  json_t *blocks = json_array ();
  size_t i;
  const json_t *block;
  json_array_foreach (content, i, block)
  {
    if (!json_is_object (block))
      continue;
    json_t *copy = json_deep_copy (block);
    json_object_del (copy, "_meta");
    if (v->content_meta)
      json_object_set (copy, "_meta", (json_t *)labels);
    json_array_append_new (blocks, copy);
  }
  json_t *result = json_pack ("{s:o, s:b, s:O}", "content", blocks, "isError",
                              r->refused || json_is_true (json_object_get (parsed, "isError")),
                              "_meta", labels);
  const json_t *structured = json_object_get (parsed, "structuredContent");
  if (json_is_object (structured))
    json_object_set (result, "structuredContent", (json_t *)structured);
  return result;
}

json_t *
bx_mcp_tool_result (const struct bx_client_response *r, const struct bx_mcp_version *v,
                    bool server_tool)
{
  switch (r->kind)
    {
    case BX_CLIENT_RESULT:
      {
        /* The labels travel in _meta, on the result and (where the revision defines it) on
         * the content block, so a client can show untrusted text as such; the text itself is
         * brokerd's, byte for byte.  A tool's own refusal (a missing file) is an error the
         * model can act on, told apart from content that merely looks like one. */
        json_t *labels = json_pack ("{s:s, s:s, s:b, s:b}", BX_MCP_META "outcome",
                                    r->refused ? "refused" : "result", BX_MCP_META "class",
                                    r->class, BX_MCP_META "untrusted", r->untrusted,
                                    BX_MCP_META "truncated", r->truncated);
        json_t *passed = server_tool && !r->refused ? server_result (r, v, labels) : NULL;
        if (passed != NULL)
          {
            json_decref (labels);
            return passed;
          }
        json_t *text = json_stringn (r->content, r->content_len);
        if (text == NULL) /* brokerd's frames are UTF-8; never, but never a crash either */
          text = json_string ("(the result is not valid text)");
        json_t *block = json_pack ("{s:s, s:o}", "type", "text", "text", text);
        if (v->content_meta)
          json_object_set (block, "_meta", labels);
        json_t *content = json_pack ("[o]", block);
        return json_pack ("{s:o, s:b, s:o}", "content", content, "isError", r->refused, "_meta",
                          labels);
      }
    case BX_CLIENT_DENIED:
      return text_result ("denied", "denied: ", r->message, true);
    case BX_CLIENT_FAILED:
    default:
      if (r->unavailable)
        return text_result ("unavailable", "", r->message, true);
      return text_result ("failed", "failed: ", r->message, true);
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The grants as a peer may see them.  See grants_view.h. */
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "grants_view.h"
#include "mcp_server.h"

/* How much of a server's text a peer is shown: it is the model's input, written by a program
 * the owner runs but does not vouch for. */
#define SHOWN_DESCRIPTION_MAX 1024
#define SHOWN_TITLE_MAX       128
#define SHOWN_SCHEMA_TEXT_MAX 512
/* How much of one answer the servers' tools may take, shared out equally among the MCP
 * servers' grants: whatever a server lists within its bounds, made safe (which may make it
 * several times longer), the answer still fits in a frame, with the grants themselves (the
 * owner's text) beside it, and one server cannot crowd out the others. */
#define SHOWN_MCP_TOOLS_MAX (3u * 1024 * 1024)

/* Whether some tool of G may change files in its folders: write_file always, shell unless the
 * grant says `writable: false` (the same two facts runner.c mounts by). */
static bool
folders_writable (const struct bx_grant *g)
{
  return bx_grant_lists (g, BX_TOOL_WRITE_FILE) || (bx_grant_runs_commands (g) && g->writable);
}

static json_t *
grant_view (const struct bx_grant *g, size_t index)
{
  json_t *tools = json_array ();
  /* An internal tool (mcp_call, which an MCP server's grant lists) is no peer's to name. */
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    if (bx_grant_lists (g, (enum bx_tool)t) && !bx_tool_def ((enum bx_tool)t)->internal)
      json_array_append_new (tools, json_string (bx_tool_name ((enum bx_tool)t)));
  json_t *folders = json_array ();
  bool writable = folders_writable (g);
  for (size_t i = 0; i < g->n_paths; i++)
    json_array_append_new (folders,
                           json_pack ("{s:s, s:b}", "path", g->paths[i], "writable", writable));
  /* A pattern as the config holds it: "example.com" (port 443), "*.example.org:8443",
   * "api.example.net:*"; the model reads the port from it as policy does. */
  json_t *hosts = json_array ();
  for (size_t i = 0; i < g->n_hosts; i++)
    json_array_append_new (hosts, json_string (g->hosts[i]));
  return json_pack ("{s:I, s:o, s:o, s:o, s:s, s:b, s:b}", "grant", (json_int_t)index + 1, "tools",
                    tools, "folders", folders, "hosts", hosts, "class", bx_class_name (g->class),
                    "untrusted", g->untrusted, "approval", g->approval != BX_APPROVAL_NEVER);
}

/* S made safe for a model to read: printable, one line, within MAX bytes. */
static json_t *
safe_text (const char *s, size_t len, size_t max)
{
  cleanup_free char *shown = bx_printable_fit (s, len, max, false, NULL);
  return json_string (shown);
}

/* A copy of the JSON value J (a schema, annotations) whose strings are made safe, or NULL
 * when a key is not already safe text: a key is a property's name, which cannot be changed
 * without changing what the schema means, so such a value is not shown at all. */
static json_t *
safe_value (const json_t *j)
{
  if (json_is_string (j))
    return safe_text (json_string_value (j), json_string_length (j), SHOWN_SCHEMA_TEXT_MAX);
  if (json_is_array (j))
    {
      json_t *copy = json_array ();
      size_t i;
      const json_t *item;
      json_array_foreach (j, i, item)
      {
        json_t *safe = safe_value (item);
        if (safe == NULL)
          return json_decref (copy), NULL;
        json_array_append_new (copy, safe);
      }
      return copy;
    }
  if (json_is_object (j))
    {
      json_t *copy = json_object ();
      const char *key;
      const json_t *value;
      json_object_foreach ((json_t *)j, key, value)
      {
        cleanup_free char *shown = bx_printable (key, strlen (key), BX_SHOWN_NAME_MAX);
        json_t *safe = strcmp (shown, key) == 0 ? safe_value (value) : NULL;
        if (safe == NULL)
          return json_decref (copy), NULL;
        json_object_set_new (copy, key, safe);
      }
      return copy;
    }
  return json_copy ((json_t *)j);
}

/* One tool SERVER listed (mcp_lists.h), as a peer is shown it: SERVER.TOOL, its text made
 * safe and cut, its inputSchema only when it is an object schema (else one that takes any
 * object), its annotations only when they are an object. */
static json_t *
mcp_tool_view (const char *server, const json_t *tool)
{
  const char *name = json_string_value (json_object_get (tool, "name"));
  json_t *view = json_pack ("{s:s++}", "name", server, ".", name);
  const json_t *description = json_object_get (tool, "description");
  if (json_is_string (description))
    json_object_set_new (view, "description",
                         safe_text (json_string_value (description),
                                    json_string_length (description), SHOWN_DESCRIPTION_MAX));
  const json_t *title = json_object_get (tool, "title");
  if (json_is_string (title))
    json_object_set_new (
        view, "title",
        safe_text (json_string_value (title), json_string_length (title), SHOWN_TITLE_MAX));
  const json_t *schema = json_object_get (tool, "inputSchema");
  const char *type = json_string_value (json_object_get (schema, "type"));
  json_t *safe_schema = type != NULL && strcmp (type, "object") == 0 ? safe_value (schema) : NULL;
  json_object_set_new (view, "inputSchema",
                       safe_schema != NULL ? safe_schema : json_pack ("{s:s}", "type", "object"));
  const json_t *annotations = json_object_get (tool, "annotations");
  json_t *safe_annotations = json_is_object (annotations) ? safe_value (annotations) : NULL;
  if (safe_annotations != NULL)
    json_object_set_new (view, "annotations", safe_annotations);
  return view;
}

/* An MCP server's grant: the four tools' fields (it lists none of them), and the server's
 * name and tools as listed so far (none while its list is not in). */
static json_t *
mcp_grant_view (const struct bx_grant *g, size_t index, struct bx_mcp_lists *lists, size_t share)
{
  json_t *view = grant_view (g, index);
  json_t *tools = json_array ();
  json_t *listed = lists != NULL ? bx_mcp_lists_tools (lists, g->mcp->name) : NULL;
  size_t i, used = 0;
  const json_t *tool;
  /* In the server's order, while they fit in its share; the tools past it are not shown. */
  json_array_foreach (listed, i, tool)
  {
    json_t *shown = mcp_tool_view (g->mcp->name, tool);
    size_t size = json_dumpb (shown, NULL, 0, JSON_COMPACT) + 1;
    if (used + size > share)
      {
        json_decref (shown);
        break;
      }
    used += size;
    json_array_append_new (tools, shown);
  }
  json_decref (listed);
  json_object_set_new (view, "mcp_server", json_string (g->mcp->name));
  json_object_set_new (view, "mcp_tools", tools);
  return view;
}

json_t *
bx_grants_view (const struct bx_config *config, struct bx_mcp_lists *lists)
{
  json_t *list = json_array ();
  size_t servers = 0;
  for (size_t i = 0; i < config->n_grants; i++)
    servers += config->grants[i].mcp != NULL && config->grants[i].mcp->name != NULL;
  size_t share = servers > 0 ? SHOWN_MCP_TOOLS_MAX / servers : 0;
  for (size_t i = 0; i < config->n_grants; i++)
    {
      const struct bx_grant *g = &config->grants[i];
      json_array_append_new (list, g->mcp != NULL && g->mcp->name != NULL
                                       ? mcp_grant_view (g, i, lists, share)
                                       : grant_view (g, i));
    }
  return list;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The grants as a peer may see them.  See grants_view.h. */
#include "grants_view.h"

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
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    if (bx_grant_lists (g, (enum bx_tool)t))
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

json_t *
bx_grants_view (const struct bx_config *config)
{
  json_t *list = json_array ();
  for (size_t i = 0; i < config->n_grants; i++)
    /* An MCP server's grant lists no tool of the four: front ends do not offer its tools
     * yet, and a client that knows only the four must not read a list it cannot check. */
    if (config->grants[i].mcp == NULL)
      json_array_append_new (list, grant_view (&config->grants[i], i));
  return list;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* An owner's MCP server: see mcp_server.h. */
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "mcp_server.h"

static bool
made_of (const char *s, size_t max, const char *chars)
{
  size_t n = strlen (s);
  return n >= 1 && n <= max && strspn (s, chars) == n;
}

static void
parse_command (struct bx_walk *w, yaml_node_t *node, struct bx_mcp_server *s)
{
  if (!bx_walk_list (w, node, "command", "the server's program and its arguments",
                     "[python3, /srv/mcp/server.py]"))
    return;
  size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
  if (n == 0 || n > BX_MCP_SERVER_ARGV_MAX)
    {
      bx_walk_problem (w, node, "\"command\" has %zu items: expected 1 to %d", n,
                       BX_MCP_SERVER_ARGV_MAX);
      return;
    }
  s->command = bx_xzalloc ((n + 1) * sizeof *s->command);
  BX_WALK_ITEMS (w, node, item)
  {
    const char *arg = bx_walk_item (w, item, "command", "a program or an argument");
    if (arg == NULL)
      continue;
    if (s->n_command == 0 && arg[0] == '\0')
      bx_walk_problem (w, item, "the program of \"command\" is empty: expected a name or a path");
    s->command[s->n_command++] = bx_xstrdup (arg);
  }
}

void
bx_mcp_server_parse (struct bx_walk *w, yaml_node_t *key, yaml_node_t *value, yaml_node_t *tools,
                     struct bx_grant *g)
{
  static const char *const known[] = { "name", "command", "cwd", NULL };
  enum
  {
    K_NAME,
    K_COMMAND,
    K_CWD,
    K_N
  };
  /* mcp_call is the one tool of such a grant, and no grant may list it by name. */
  g->tools |= 1u << BX_TOOL_MCP_CALL;
  if (tools != NULL)
    bx_walk_problem (w, key,
                     "a grant with \"mcp_server\" has no \"tools\": its tools are the server's");
  yaml_node_t *keys[K_N], *v[K_N];
  if (!bx_walk_mapping (w, value, "mcp_server", known, keys, v))
    return;
  struct bx_mcp_server *s = bx_xzalloc (sizeof *s);
  g->mcp = s;
  if (v[K_NAME] == NULL)
    bx_walk_problem (w, value, "mcp_server has no \"name\": expected 1 to %d of [a-z0-9_-]",
                     BX_MCP_SERVER_NAME_MAX);
  else
    {
      const char *name = bx_walk_string (w, v[K_NAME], "name", "the server's name");
      if (name != NULL && !made_of (name, BX_MCP_SERVER_NAME_MAX, BX_MCP_SERVER_NAME_CHARS))
        {
          cleanup_free char *shown = bx_quoted (name, BX_SHOWN_NAME_MAX);
          bx_walk_problem (w, v[K_NAME], "server name %s: expected 1 to %d of [a-z0-9_-]", shown,
                           BX_MCP_SERVER_NAME_MAX);
        }
      else if (name != NULL)
        s->name = bx_xstrdup (name);
    }
  if (v[K_COMMAND] == NULL)
    bx_walk_problem (w, value,
                     "mcp_server has no \"command\": expected its program and "
                     "arguments, such as [python3, /srv/mcp/server.py]");
  else
    parse_command (w, v[K_COMMAND], s);
  if (v[K_CWD] != NULL)
    {
      const char *cwd = bx_walk_string (w, v[K_CWD], "cwd", "an absolute folder");
      if (cwd != NULL && !bx_path_is_clean (cwd))
        bx_walk_problem (w, v[K_CWD], "cwd \"%s\" is not an absolute, clean path", cwd);
      else if (cwd != NULL)
        s->cwd = bx_xstrdup (cwd);
    }
}

void
bx_mcp_servers_check_names (struct bx_walk *w, yaml_node_t *grants, const struct bx_config *cfg)
{
  for (size_t i = 0; i < cfg->n_grants; i++)
    for (size_t j = 0; j < i; j++)
      {
        const struct bx_mcp_server *a = cfg->grants[i].mcp, *b = cfg->grants[j].mcp;
        if (a == NULL || b == NULL || a->name == NULL || b->name == NULL
            || strcmp (a->name, b->name) != 0)
          continue;
        yaml_node_t *node = bx_walk_node (w, grants->data.sequence.items.start[i]);
        if (node != NULL)
          bx_walk_problem (w, node,
                           "MCP server \"%s\" of grant %zu is also grant %zu's: "
                           "expected one grant per server",
                           a->name, i + 1, j + 1);
      }
}

void
bx_mcp_server_free (struct bx_mcp_server *s)
{
  if (s == NULL)
    return;
  free (s->name);
  for (size_t i = 0; i < s->n_command; i++)
    free (s->command[i]);
  free (s->command);
  free (s->cwd);
  free (s);
}

const struct bx_grant *
bx_mcp_server_grant (const struct bx_config *cfg, const char *server, size_t *index)
{
  for (size_t i = 0; cfg != NULL && server != NULL && i < cfg->n_grants; i++)
    if (cfg->grants[i].mcp != NULL && cfg->grants[i].mcp->name != NULL
        && strcmp (cfg->grants[i].mcp->name, server) == 0)
      {
        *index = i;
        return &cfg->grants[i];
      }
  return NULL;
}

bool
bx_mcp_tool_name_valid (const char *name)
{
  return made_of (name, BX_MCP_TOOL_NAME_MAX, BX_MCP_TOOL_NAME_CHARS);
}

char *
bx_mcp_server_request (const struct bx_mcp_server *server, const char *method, json_t *params)
{
  json_t *command = json_array ();
  for (size_t i = 0; i < server->n_command; i++)
    json_array_append_new (command, json_string (server->command[i]));
  json_t *request = json_pack ("{s:o, s:s}", "command", command, "method", method);
  if (params != NULL)
    json_object_set_new (request, "params", params);
  if (server->cwd != NULL)
    json_object_set_new (request, "cwd", json_string (server->cwd));
  char *text = json_dumps (request, JSON_COMPACT);
  json_decref (request);
  return text;
}

int
bx_mcp_server_call (const struct bx_config *cfg, const char *name, const json_t *arguments,
                    struct bx_tool_args *args, bx_sentence *why)
{
  why->text = NULL;
  const char *dot = strchr (name, '.');
  if (dot == NULL || (size_t)(dot - name) > BX_MCP_SERVER_NAME_MAX)
    return -1;
  char server[BX_MCP_SERVER_NAME_MAX + 1];
  memcpy (server, name, (size_t)(dot - name));
  server[dot - name] = '\0';
  size_t index;
  const struct bx_grant *g = bx_mcp_server_grant (cfg, server, &index);
  if (g == NULL)
    return -1;
  const char *tool = dot + 1;
  if (!bx_mcp_tool_name_valid (tool))
    return *why = BX_SENTENCE ("the tool's name is not 1 to 128 of [A-Za-z0-9_.-]"), -1;
  if (arguments != NULL && !json_is_object (arguments))
    return *why = BX_SENTENCE ("the arguments must be a JSON object"), -1;

  json_t *given = arguments != NULL ? json_incref ((json_t *)arguments) : json_object ();
  char *text = bx_mcp_server_request (g->mcp, "tools/call",
                                      json_pack ("{s:s, s:o}", "name", tool, "arguments", given));
  /* toolkit reads at most this much. */
  if (strlen (text) > BX_TOOL_ARGS_MAX)
    {
      free (text);
      return *why = BX_SENTENCE ("the arguments are larger than toolkit reads (2 MiB)"), -1;
    }
  memset (args, 0, sizeof *args);
  args->tool = BX_TOOL_MCP_CALL;
  args->server = bx_xstrdup (server);
  args->request = text;
  return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* What the model is told of its grants: brokerd's answer to a grants_request (the one place
 * they are configured) turned into the sentences of each tool's description and of the
 * session's instructions, so the model names paths inside its folders and hosts it may
 * reach instead of guessing. */
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "mcp.h"

/* A growing string. */
struct text
{
  char *s;
};

static void
add (struct text *t, const char *part)
{
  char *next = bx_xasprintf ("%s%s", t->s ? t->s : "", part);
  free (t->s);
  t->s = next;
}

static void
add_list (struct text *t, const json_t *items, bool folders)
{
  for (size_t i = 0; i < json_array_size (items); i++)
    {
      const json_t *item = json_array_get (items, i);
      if (i > 0)
        add (t, ", ");
      add (t, json_string_value (folders ? json_object_get (item, "path") : item));
    }
}

static bool
grant_lists (const json_t *grant, const char *tool)
{
  const json_t *tools = json_object_get (grant, "tools");
  for (size_t i = 0; i < json_array_size (tools); i++)
    if (strcmp (json_string_value (json_array_get (tools, i)), tool) == 0)
      return true;
  return false;
}

/* What one grant gives TOOL (a rule of the tool table says what matters to it), one
 * sentence without its full stop. */
static void
grant_sentence (struct text *t, const json_t *g, enum bx_tool tool)
{
  const struct bx_tool_def *def = bx_tool_def (tool);
  const json_t *folders = json_object_get (g, "folders");
  const json_t *hosts = json_object_get (g, "hosts");
  switch (def->rule)
    {
    case BX_RULE_FILE:
      add (t, json_array_size (folders) == 1 ? "the folder " : "the folders ");
      add_list (t, folders, true);
      break;
    case BX_RULE_COMMAND:
      if (json_array_size (folders) == 0)
        add (t, "no folder (it runs in /tmp)");
      else
        {
          add (t, json_array_size (folders) == 1 ? "the folder " : "the folders ");
          add_list (t, folders, true);
          bool writable = json_is_true (json_object_get (json_array_get (folders, 0), "writable"));
          add (t, writable ? " (writable)" : " (read-only)");
          add (t, ", and without a cwd it runs in ");
          add (t, json_string_value (json_object_get (json_array_get (folders, 0), "path")));
        }
      if (json_array_size (hosts) > 0)
        {
          add (t, "; network to ");
          add_list (t, hosts, false);
        }
      break;
    case BX_RULE_FETCH:
      add (t, json_array_size (hosts) == 1 ? "the host " : "the hosts ");
      add_list (t, hosts, false);
      break;
    case BX_RULE_MCP_SERVER:
      break; /* no grant lists an internal tool */
    }
  if (json_is_true (json_object_get (g, "approval")))
    add (t, " (each call waits for the owner's approval)");
}

char *
bx_mcp_grants_text (const json_t *grants, enum bx_tool tool)
{
  const char *name = bx_tool_name (tool);
  struct text t = { NULL };
  for (size_t i = 0; i < json_array_size (grants); i++)
    {
      const json_t *g = json_array_get (grants, i);
      if (!grant_lists (g, name))
        continue;
      add (&t, t.s ? "; or " : "Granted: ");
      grant_sentence (&t, g, tool);
    }
  if (t.s != NULL)
    add (&t, ".");
  return t.s;
}

/* How many bytes of the servers' tool names the instructions hold, all servers together: the
 * names repeat what tools/list says, and the instructions often sit in every prompt.  A tool
 * name is at most 32 + 1 + 128 bytes (docs/mcp-servers.md), so a few dozen fit. */
#define SERVER_NAMES_MAX 4096

/* The folders and hosts of an MCP server's grant, and whether its calls wait for approval:
 * the server runs with them, as a shell does, and its tools take paths in those folders. */
static void
server_sentence (struct text *t, const json_t *g)
{
  const json_t *folders = json_object_get (g, "folders");
  const json_t *hosts = json_object_get (g, "hosts");
  if (json_array_size (folders) == 0)
    add (t, "no folder");
  else
    {
      add (t, json_array_size (folders) == 1 ? "the folder " : "the folders ");
      add_list (t, folders, true);
      bool writable = json_is_true (json_object_get (json_array_get (folders, 0), "writable"));
      add (t, writable ? " (writable)" : " (read-only)");
    }
  if (json_array_size (hosts) > 0)
    {
      add (t, "; network to ");
      add_list (t, hosts, false);
    }
  if (json_is_true (json_object_get (g, "approval")))
    add (t, " (each call waits for the owner's approval)");
}

/* One line for the tools of the MCP server of grant G that tools/list offers (none: no line),
 * naming them while *BUDGET lasts and counting the rest.  True when it wrote one. */
static bool
server_line (struct text *t, const json_t *grants, const json_t *g, size_t *budget)
{
  const char *server = json_string_value (json_object_get (g, "mcp_server"));
  if (server == NULL)
    return false;
  struct text names = { NULL };
  size_t offered = 0, named = 0;
  size_t i;
  const json_t *tool;
  json_array_foreach (json_object_get (g, "mcp_tools"), i, tool)
  {
    if (!bx_mcp_server_tool_offered (grants, tool))
      continue;
    const char *name = json_string_value (json_object_get (tool, "name"));
    offered++;
    /* Names brokerd passed are of [A-Za-z0-9_.-] already; made safe all the same, as
     * everything here that a config or a server wrote. */
    cleanup_free char *shown = bx_printable_fit (name, strlen (name), 200, true, NULL);
    size_t need = strlen (shown) + 2;
    if (need > *budget)
      {
        *budget = 0;
        continue;
      }
    *budget -= need;
    add (&names, named++ > 0 ? ", " : "");
    add (&names, shown);
  }
  if (offered == 0)
    {
      free (names.s);
      return false;
    }
  add (t, "\n- ");
  if (named > 0)
    add (t, names.s);
  free (names.s);
  cleanup_free char *rest
      = named == offered ? NULL
        : named == 0     ? bx_xasprintf ("%zu tool(s) (tools/list names them)", offered)
                         : bx_xasprintf (" and %zu more (tools/list names them)", offered - named);
  if (rest != NULL)
    add (t, rest);
  cleanup_free char *shown_server = bx_printable_fit (server, strlen (server), 64, true, NULL);
  cleanup_free char *under
      = bx_xasprintf (": tools of the MCP server %s, run under grant %lld. Granted: ", shown_server,
                      (long long)json_integer_value (json_object_get (g, "grant")));
  add (t, under);
  server_sentence (t, g);
  add (t, ".");
  return true;
}

#define INSTRUCTIONS                                                                               \
  "Every tool call runs in a fresh sandbox that sees only what its owner granted. A denied or "    \
  "failed call says why; correct the call rather than retrying it unchanged."

char *
bx_mcp_instructions (const json_t *grants, const char *why_not)
{
  struct text t = { NULL };
  add (&t, INSTRUCTIONS);
  if (grants == NULL)
    {
      /* The tools are listed as if all were granted: say why nothing more is known. */
      add (&t, " The tool broker could not be reached to learn what was granted (");
      add (&t, why_not ? why_not : "no reason given");
      add (&t, "); the tools are listed without their folders and hosts, and each call fails "
               "until it can be reached (its owner: see docs/runbook.md#broker-unavailable).");
      return t.s;
    }
  struct text lines = { NULL };
  bool servers = false;
  for (int i = 0; i < BX_TOOL_COUNT; i++)
    {
      cleanup_free char *granted = bx_mcp_grants_text (grants, (enum bx_tool)i);
      if (granted == NULL)
        continue;
      add (&lines, "\n- ");
      add (&lines, bx_tool_name ((enum bx_tool)i));
      add (&lines, ": ");
      add (&lines, granted);
    }
  size_t budget = SERVER_NAMES_MAX;
  for (size_t i = 0; i < json_array_size (grants); i++)
    {
      const json_t *g = json_array_get (grants, i);
      if (json_object_get (g, "mcp_server") != NULL)
        servers = true;
      server_line (&lines, grants, g, &budget);
    }
  if (lines.s != NULL)
    {
      add (&t, "\n\nWhat you were granted; use absolute paths inside these folders:");
      add (&t, lines.s);
      free (lines.s);
    }
  else if (servers)
    add (&t, " No tool is offered yet: the owner's MCP servers offer theirs once the tool broker "
             "has listed them.");
  else
    add (&t, " Nothing is granted: every call will be denied.");
  return t.s;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* What the model is told of its grants: brokerd's answer to a grants_request (the one place
 * they are configured) turned into the sentences of each tool's description and of the
 * session's instructions, so the model names paths inside its folders and hosts it may
 * reach instead of guessing. */
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"

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
  bool any = false;
  for (int i = 0; i < BX_TOOL_COUNT; i++)
    {
      cleanup_free char *granted = bx_mcp_grants_text (grants, (enum bx_tool)i);
      if (granted == NULL)
        continue;
      if (!any)
        add (&t, "\n\nWhat you were granted; use absolute paths inside these folders:");
      any = true;
      add (&t, "\n- ");
      add (&t, bx_tool_name ((enum bx_tool)i));
      add (&t, ": ");
      add (&t, granted);
    }
  if (!any)
    add (&t, " Nothing is granted: every call will be denied.");
  return t.s;
}

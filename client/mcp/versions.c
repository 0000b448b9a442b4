/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP revisions this server speaks, one row each with what the revision defines of what
 * this server sends or accepts: see mcp.h.  Both transports and every message builder read
 * this table; a revision that does not define a field does not get it, because a client
 * validating against its own revision's schema may refuse what it does not know. */
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"

#include "mcp.h"

/* Newest first: an initialize asking for a revision not spoken is answered with the first
 * row the transport has. */
static const struct bx_mcp_version versions[] = {
  {
      .name = "2025-11-25",
      .http = true,
      .annotations = true,
      .titles = true,
      .content_meta = true,
      .progress_message = true,
  },
  {
      .name = "2025-06-18",
      .http = true,
      .annotations = true,
      .titles = true,
      .content_meta = true,
      .progress_message = true,
  },
  {
      /* The first with streamable HTTP, tool annotations and a progress message; the one
       * that made batches explicit, and the only one whose server MUST accept them. */
      .name = "2025-03-26",
      .http = true,
      .batches = true,
      .annotations = true,
      .progress_message = true,
  },
  {
      /* Its HTTP transport was HTTP+SSE, which this server does not serve.  Its messages
       * "MUST follow the JSON-RPC 2.0 specification", which defines batches: accepted. */
      .name = "2024-11-05",
      .batches = true,
  },
};

#define VERSION_COUNT (sizeof versions / sizeof *versions)

static bool
carried (const struct bx_mcp_version *v, enum bx_mcp_transport transport)
{
  return transport == BX_MCP_STDIO || v->http;
}

const struct bx_mcp_version *
bx_mcp_version_find (const char *name, enum bx_mcp_transport transport)
{
  for (size_t i = 0; name != NULL && i < VERSION_COUNT; i++)
    if (strcmp (name, versions[i].name) == 0 && carried (&versions[i], transport))
      return &versions[i];
  return NULL;
}

const struct bx_mcp_version *
bx_mcp_version_latest (void)
{
  return &versions[0];
}

/* The spec (2025-06-18, "Protocol Version Header"): without the header, and with no other way
 * to tell, a server SHOULD assume 2025-03-26, the oldest revision with streamable HTTP: a
 * client of that revision never sends the header. */
const struct bx_mcp_version *
bx_mcp_version_http_default (void)
{
  const struct bx_mcp_version *oldest = NULL;
  for (size_t i = 0; i < VERSION_COUNT; i++)
    if (versions[i].http)
      oldest = &versions[i];
  return oldest;
}

char *
bx_mcp_versions_spoken (enum bx_mcp_transport transport)
{
  const char *names[VERSION_COUNT];
  size_t n = 0;
  for (size_t i = 0; i < VERSION_COUNT; i++)
    if (carried (&versions[i], transport))
      names[n++] = versions[i].name;
  char *text = bx_xstrdup (names[0]);
  for (size_t i = 1; i < n; i++)
    {
      char *longer = bx_xasprintf ("%s%s%s", text, i + 1 == n ? " and " : ", ", names[i]);
      free (text);
      text = longer;
    }
  return text;
}

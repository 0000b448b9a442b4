/* SPDX-License-Identifier: Apache-2.0 */
/* The tools of the owner's MCP servers, listed once and kept (docs/mcp-servers.md).
 *
 * At start and after each reload, one thread asks every server of the config serving then
 * for its `tools/list`, each as one mcp_call in a sandbox of the server's grant (its runtime,
 * root, folders, hosts and limits, as any call of it), one server after the other, and keeps
 * what it answered.  Nothing waits for it: until a server's list is in, the server offers no
 * tools, and a server whose list fails (it does not start, answers garbage, passes its time
 * limit) is logged for the owner and offers none until the next reload.
 *
 * What is kept is bounded: at most BX_MCP_LIST_TOOLS_MAX tools a server, over at most
 * BX_MCP_LIST_PAGES_MAX pages (`nextCursor`); a tool whose name is not 1 to 128 of
 * [A-Za-z0-9_.-], or that repeats a name, is dropped; a description, title or schema over its
 * size is dropped with its tool's other fields kept.  The text is kept as the server wrote it:
 * what a peer is shown is made safe where it is shown. */
#ifndef BX_BROKER_MCP_LISTS_H
#define BX_BROKER_MCP_LISTS_H

#include <jansson.h>

struct brokerd;
struct bx_mcp_lists;

#define BX_MCP_LIST_TOOLS_MAX       256
#define BX_MCP_LIST_PAGES_MAX       16
#define BX_MCP_LIST_DESCRIPTION_MAX 4096  /* bytes of a description or a title */
#define BX_MCP_LIST_SCHEMA_MAX      65536 /* bytes of a schema or annotations, as compact JSON */

/* The owner's log line for a server whose tools could not be listed; SERVER and the reason
 * follow, the reason made one line. */
#define BX_MCP_LIST_FAILED "MCP server %s offers no tools until the next reload: %s"

struct bx_mcp_lists *bx_mcp_lists_new (void);
/* Forgets every list and starts listing the servers of the config serving BROKERD now. */
void bx_mcp_lists_refresh (struct bx_mcp_lists *lists, struct brokerd *brokerd);
/* A new reference to the tools SERVER listed (an array of objects with "name" and whichever
 * of "description", "title", "inputSchema", "outputSchema", "annotations" it gave), or NULL
 * while its list is not in, or when it failed. */
json_t *bx_mcp_lists_tools (struct bx_mcp_lists *lists, const char *server);
/* Cancels the listings running and waits for their threads; brokerd's canceller is still up. */
void bx_mcp_lists_free (struct bx_mcp_lists *lists, struct brokerd *brokerd);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* An owner's MCP server: a grant whose `mcp_server` key names it and the command that starts
 * it on stdio, instead of `tools` (docs/mcp-servers.md).  Its grant is a shell's in all but
 * the command: its folders, hosts, root, class, approvals and limits are checked and applied
 * as every grant's.  A model calls its tools as SERVER.TOOL; brokerd turns each call into one
 * mcp_call (bx/tools.h) whose input it builds here. */
#ifndef BX_BROKER_MCP_SERVER_H
#define BX_BROKER_MCP_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "bx/error.h"

#include "config.h"
#include "yaml_walk.h"

/* A server's name: 1 to BX_MCP_SERVER_NAME_MAX of these, so SERVER.TOOL splits at its first
 * dot and the name reads the same in every log. */
#define BX_MCP_SERVER_NAME_MAX   32
#define BX_MCP_SERVER_NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_-"
/* A tool's name as MCP advises it (1 to 128 of [A-Za-z0-9_.-]). */
#define BX_MCP_TOOL_NAME_MAX   128
#define BX_MCP_TOOL_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
/* The server's argument list: at most this many strings (toolkit's own bound). */
#define BX_MCP_SERVER_ARGV_MAX 64

struct bx_mcp_server
{
  char *name;
  char **command; /* argv, n_command >= 1 */
  size_t n_command;
  char *cwd; /* an absolute path, or NULL */
};

/* Reads the grant G's `mcp_server` VALUE (KEY its key node): G then lists mcp_call and
 * nothing else.  TOOLS is the grant's `tools` value, which must be absent.  Problems go to W. */
void bx_mcp_server_parse (struct bx_walk *w, yaml_node_t *key, yaml_node_t *value,
                          yaml_node_t *tools, struct bx_grant *g);
/* Two grants naming the same server: noted at the second.  GRANTS is the config's list node. */
void bx_mcp_servers_check_names (struct bx_walk *w, yaml_node_t *grants,
                                 const struct bx_config *cfg);
void bx_mcp_server_free (struct bx_mcp_server *server);

/* Whether NAME is a tool's name as MCP advises it (BX_MCP_TOOL_NAME_CHARS, 1 to 128). */
bool bx_mcp_tool_name_valid (const char *name);
/* toolkit mcp_call's input (docs/mcp-servers.md) asking SERVER for METHOD with PARAMS (taken;
 * NULL: none), as compact JSON text to free. */
char *bx_mcp_server_request (const struct bx_mcp_server *server, const char *method,
                             json_t *params);
/* Whether NAME has the form SERVER.TOOL of a server CFG names: 0 with *ARGS an mcp_call of
 * that tool with ARGUMENTS (server, request), or -1 when it does not (WHY's text: NULL when
 * NAME names no server, else the sentence the call is refused with). */
int bx_mcp_server_call (const struct bx_config *cfg, const char *name, const json_t *arguments,
                        struct bx_tool_args *args, bx_sentence *why);
/* The grant serving SERVER, or NULL; *INDEX gets its place in cfg->grants. */
const struct bx_grant *bx_mcp_server_grant (const struct bx_config *cfg, const char *server,
                                            size_t *index);

#endif

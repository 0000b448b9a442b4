/* SPDX-License-Identifier: Apache-2.0 */
/* The tool table: one row per tool, everything brokerd, the MCP server, toolkit and the
 * runtime modules know of a tool, said once.  Jansson-free, so a runtime module links it
 * (bx_tools) without proto.
 *
 *   name         what the model calls it, toolkit's first argument, the grant's `tools`
 *   number       enum bx_tool, which runtime ABI 1.2 hands modules (spec_tool_id)
 *   fields       its arguments: bx/tool_args.h parses them, writes their canonical JSON and
 *                makes their JSON Schema from this list
 *   rule         how policy decides it (broker/policy/policy.c)
 *   run          the RunSpec row: what is mounted, whether it has egress, whether a grant's
 *                own image or root applies (broker/calls/runner.c)
 *   limit        the runtime's default time limit and the module option that sets it
 *   MCP          title, description and behaviour hints (client/mcp/mcp_tools.c)
 *
 *   internal     brokerd builds the arguments itself: no model, client, frame or grant can
 *                name the tool (bx_tool_from_name does not know it), and toolkit reads them
 *                with its own parser (mcp_call: toolkit/mcp_server.h)
 *
 * A new tool is a row here (with its enum value appended in bx/contract.h, never
 * renumbering), toolkit's file for it and tests.  A new rule or RunSpec row is a case in
 * policy.c or runner.c. */
#ifndef BX_TOOLS_H
#define BX_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bx/contract.h"

/* A tool's arguments, parsed (bx/tool_args.h).  Every field is a string. */
struct bx_tool_args
{
  enum bx_tool tool;
  char *path;    /* read_file, write_file */
  char *content; /* write_file; has no NUL, so strlen is its length */
  char *command; /* shell */
  char *cwd;     /* shell; NULL when absent */
  char *url;     /* http_fetch */
  /* mcp_call (internal: brokerd fills these, no parser does): the server's name, and
   * toolkit's whole input (toolkit/mcp_server.h) as JSON text. */
  char *server;
  char *request;
};

/* One argument: a string at OFFSET in struct bx_tool_args.  DESCRIPTION is what a model
 * reads in the JSON Schema, so it says what to put there. */
struct bx_tool_field
{
  const char *name;
  size_t offset;
  bool optional;
  const char *description;
};
#define BX_TOOL_FIELDS_MAX 2

/* How policy decides a call (broker/policy/policy.c). */
enum bx_tool_rule
{
  BX_RULE_FILE,       /* "path" lies in a folder of a grant that lists the tool */
  BX_RULE_COMMAND,    /* a grant that lists the tool; its folders and hosts come along */
  BX_RULE_FETCH,      /* "url" names a granted host and port */
  BX_RULE_MCP_SERVER, /* an owner's MCP server: not configurable yet, so always denied */
};

/* What the RunSpec mounts (broker/calls/runner.c). */
enum bx_tool_mounts
{
  BX_MOUNT_NONE,          /* nothing */
  BX_MOUNT_FOLDER_READ,   /* the matched folder, read-only */
  BX_MOUNT_FOLDER_WRITE,  /* the matched folder, writable (with its protected paths) */
  BX_MOUNT_GRANT_FOLDERS, /* every folder of the grant, as writable as the grant says */
};

/* Whether the RunSpec has egress (broker/calls/runner.c). */
enum bx_tool_egress
{
  BX_EGRESS_NONE,        /* no network at all */
  BX_EGRESS_IF_HOSTS,    /* the grant's hosts, when it lists any */
  BX_EGRESS_GRANT_HOSTS, /* the grant's hosts, always */
};

struct bx_tool_def
{
  const char *name;
  struct bx_tool_field fields[BX_TOOL_FIELDS_MAX];
  size_t n_fields;
  enum bx_tool_rule rule;
  enum bx_tool_mounts mounts;
  enum bx_tool_egress egress;
  bool own_root;            /* a grant's `image` or `rootfs` applies (not http_fetch: curl and the
                               proxy need the module's minimal root) */
  const char *limit_option; /* the runtime option of its default time limit */
  uint64_t limit_ms;        /* that default, milliseconds */
  const char *title;        /* MCP */
  const char *description;  /* MCP */
  bool read_only, destructive, idempotent, open_world; /* MCP behaviour hints */
  bool internal; /* see above: offered to no model, named by no client */
};

/* The row of TOOL, or NULL for a number that is no tool. */
const struct bx_tool_def *bx_tool_def (enum bx_tool tool);
/* "read_file", ..., or "unknown tool". */
const char *bx_tool_name (enum bx_tool tool);
/* 0 and *out set, or -1 for a name (or NULL) that is no tool a model, client or grant may
 * name (an internal tool is none). */
int bx_tool_from_name (const char *name, enum bx_tool *out);
/* The same for toolkit's first argument, which names internal tools too. */
int bx_tool_from_toolkit_name (const char *name, enum bx_tool *out);
/* The names a model may call joined by SEP, with LAST before the last one ("read_file,
 * write_file, shell or http_fetch"), for messages that list what is expected: written into
 * BUF of SIZE bytes. */
const char *bx_tool_names (const char *sep, const char *last, char *buf, size_t size);

#endif

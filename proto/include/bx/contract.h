/* SPDX-License-Identifier: Apache-2.0 */
/* The numbers and rules two of boxmaker's programs must agree on, in one place: brokerd and
 * its client (ids, data classes, the frame), brokerd's config and its module loader (module
 * names, grant paths), podman.so and toolkit (the tools, the egress socket, the fetch
 * limit).  Header-only and jansson-free, so a runtime module can include it without linking
 * proto. */
#ifndef BX_CONTRACT_H
#define BX_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define BX_STR_(x) #x
#define BX_STR(x)  BX_STR_ (x)

/* ---- the tools (docs/protocol.md gives the four a model calls) ------------------------------ */
enum bx_tool
{
  BX_TOOL_READ_FILE,
  BX_TOOL_WRITE_FILE,
  BX_TOOL_SHELL,
  BX_TOOL_HTTP_FETCH,
  /* A request to an owner's MCP server: brokerd builds its arguments, a model never names it
   * (bx/tools.h, internal). */
  BX_TOOL_MCP_CALL,
};
#define BX_TOOL_COUNT 5
/* Everything else of a tool is its row in the tool table, bx/tools.h.  The numbers are
 * the runtime ABI's (BX_RUNTIME_TOOL_*, mcp_call since 1.4): a new tool is appended, never
 * renumbered. */

/* ---- ids: a call's and a session's (docs/protocol.md) ---------------------------------------- */
/* 1 to BX_ID_MAX of [A-Za-z0-9_.-]: podman names a container after them. */
#define BX_ID_MAX   64
#define BX_ID_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"

/* ---- a tool_request's "peer" (docs/protocol.md) -----------------------------------------------
 */
/* 1 to BX_PEER_MAX printable ASCII bytes (0x20 to 0x7e): it is copied into the audit line. */
#define BX_PEER_MAX 128

/* ---- module names (brokerd's config and its loader) ------------------------------------------ */
/* 1 to BX_MODULE_NAME_MAX of [a-z0-9_-]: a name never climbs out of the runtimes folder. */
#define BX_MODULE_NAME_MAX   64
#define BX_MODULE_NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_-"

static inline bool
bx_module_name_valid (const char *s)
{
  size_t n = s != NULL ? strlen (s) : 0;
  return n > 0 && n <= BX_MODULE_NAME_MAX && strspn (s, BX_MODULE_NAME_CHARS) == n;
}

/* ---- grant paths ----------------------------------------------------------------------------- */
/* A granted folder is mounted as `<path>:<path>:ro`: these characters would split it. */
#define BX_MOUNT_PATH_FORBIDDEN ":,"

/* ---- data classes, from least to most sensitive ---------------------------------------------- */
enum bx_data_class
{
  BX_CLASS_PUBLIC,
  BX_CLASS_INTERNAL,
  BX_CLASS_PRIVATE,
  BX_CLASS_SECRET,
};
#define BX_CLASS_COUNT 4
#define BX_CLASS_NAMES                                                                             \
  {                                                                                                \
    "public", "internal", "private", "secret"                                                      \
  }

/* ---- sizes, each derived from the frame ------------------------------------------------------ */
/* One frame's JSON text (proto/frame.c). */
#define BX_FRAME_MAX (4u * 1024 * 1024)
/* What brokerd's host collects from one call before it cuts (a module's output_cap cannot
 * be larger, and it is the largest output limit a spec holds): what a result frame can
 * carry, the frame less room for the rest of the message. */
#define BX_HOST_OUTPUT_MAX ((size_t)BX_FRAME_MAX - 64 * 1024)
/* podman.so's default output_cap: a sixteenth of a frame. */
#define BX_MODULE_OUTPUT_DEFAULT (BX_FRAME_MAX / 16)
/* The largest body http_fetch hands on (curl's --max-filesize, written as a plain literal so
 * it can be spelled into curl's argument list): two frames. */
#define BX_FETCH_BODY_MAX 8388608
_Static_assert(BX_FETCH_BODY_MAX == 2 * BX_FRAME_MAX, "the fetch body is two frames");

/* ---- where a runtime puts toolkit in a grant's own root or image ---------------------------- */
#define BX_RUNTIME_INJECTED_DIR     "/run/boxmaker"
#define BX_RUNTIME_INJECTED_TOOLKIT BX_RUNTIME_INJECTED_DIR "/toolkit"

/* ---- the egress socket (podman.so mounts the folder; toolkit's proxy and curl use it) -------- */
#define BX_EGRESS_DIR         "/run/egress"
#define BX_EGRESS_SOCKET_NAME "egress.sock"
#define BX_EGRESS_SOCKET      BX_EGRESS_DIR "/" BX_EGRESS_SOCKET_NAME
/* Where each call's egress folder lives on the host, under brokerd's home. */
#define BX_HOME_EGRESS_DIR "run/egress"
/* The proxy's connection records, one JSON line each, next to its socket: written by
 * toolkit's proxy, read by the runtime for the call's audit line. */
#define BX_EGRESS_RECORDS_FILE "egress-records"
/* At most this many per call; past it the proxy makes no more connections, so that none it
 * makes goes unrecorded. */
#define BX_EGRESS_RECORDS_MAX 256

#endif

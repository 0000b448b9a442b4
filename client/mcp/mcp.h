/* SPDX-License-Identifier: Apache-2.0 */
/* boxmaker mcp: a Model Context Protocol server in front of brokerd.  docs/mcp.md.
 *
 *   versions.c    the revisions spoken, and what each defines of what this server sends
 *   rpc.c         one JSON-RPC 2.0 message or batch read and checked; responses and errors
 *                 built
 *   mcp_tools.c   the four tools as MCP tools (schemas from proto's table) and one
 *                 tools/call
 *   mcp_grants.c  what the model is told of its grants (brokerd's grants_request answer)
 *   mcp_offer.c   that answer kept, asked again while a client is connected, and the client
 *                 told when the tools it may use change
 *   mcp_server.c  the session: initialize, ping, tools/list, tools/call on threads,
 *                 cancellation, batches
 *   stdio.c       the stdio transport (newline-delimited)
 *   http.c        the streamable HTTP transport (libmicrohttpd)
 *   main.c        `boxmaker mcp` options */
#ifndef BX_MCP_H
#define BX_MCP_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <boxmaker/client.h>

#include "bx/tools.h"

/* JSON-RPC 2.0's error codes, as the MCP specification uses them. */
#define BX_MCP_PARSE_ERROR      -32700
#define BX_MCP_INVALID_REQUEST  -32600
#define BX_MCP_METHOD_NOT_FOUND -32601
#define BX_MCP_INVALID_PARAMS   -32602
#define BX_MCP_INTERNAL_ERROR   -32603

/* The largest message either transport reads: a tool's arguments are at most 2 MiB of
 * canonical JSON, which escaping can grow; more cannot fit in a brokerd frame anyway. */
#define BX_MCP_MESSAGE_MAX (8u * 1024 * 1024)

enum bx_mcp_transport
{
  BX_MCP_STDIO, /* every revision */
  BX_MCP_HTTP,  /* streamable HTTP: the revisions that define it */
};

/* One MCP revision spoken here, and what it defines of what this server sends or accepts.
 * Nothing a revision does not define is sent to its client. */
struct bx_mcp_version
{
  const char *name;      /* "2025-11-25" */
  bool http;             /* streamable HTTP exists (2025-03-26 on) */
  bool batches;          /* a JSON-RPC batch (an array of messages) is accepted */
  bool annotations;      /* tools carry annotations (2025-03-26 on) */
  bool titles;           /* tools and serverInfo carry a title (2025-06-18 on) */
  bool content_meta;     /* a content block may carry _meta (2025-06-18 on) */
  bool progress_message; /* notifications/progress may carry a message (2025-03-26 on) */
};

/* The row of NAME when it is spoken over TRANSPORT, else NULL. */
const struct bx_mcp_version *bx_mcp_version_find (const char *name,
                                                  enum bx_mcp_transport transport);
/* The newest revision: the answer to an initialize asking for one not spoken. */
const struct bx_mcp_version *bx_mcp_version_latest (void);
/* What an HTTP request without MCP-Protocol-Version is read as. */
const struct bx_mcp_version *bx_mcp_version_http_default (void);
/* "2025-11-25, 2025-06-18 and 2025-03-26": the revisions spoken over TRANSPORT, for messages.
 * Free it. */
char *bx_mcp_versions_spoken (enum bx_mcp_transport transport);

/* The prefix of every _meta key boxmaker sets. */
#define BX_MCP_META "boxmaker/"

enum bx_mcp_kind
{
  BX_MCP_REQUEST,      /* method and id */
  BX_MCP_NOTIFICATION, /* method, no id */
  BX_MCP_RESPONSE,     /* result or error: a client's answer; this server asks nothing */
  BX_MCP_INVALID,      /* error_code and error_text say why; id when it could be read */
  BX_MCP_BATCH,        /* a non-empty array: each member is read with bx_mcp_check */
};

struct bx_mcp_message
{
  enum bx_mcp_kind kind;
  json_t *root;       /* owns everything below */
  json_t *id;         /* borrowed; NULL for a notification, or an invalid message's unknown id */
  const char *method; /* borrowed */
  json_t *params;     /* borrowed object, or NULL when absent */
  int error_code;     /* INVALID only */
  const char *error_text;
  char text[192]; /* where error_text is when it is made for this message */
};

/* Reads one message of LEN bytes (need not be NUL-terminated).  Always fills *out; free it
 * with bx_mcp_message_clear. */
void bx_mcp_parse (const char *text, size_t len, struct bx_mcp_message *out);
/* Reads one batch member, or the whole of a message: ROOT is borrowed (*out takes a
 * reference). */
void bx_mcp_check (json_t *root, struct bx_mcp_message *out);
void bx_mcp_message_clear (struct bx_mcp_message *m);

/* Whole responses (new references).  ID may be NULL (sent as null).  RESULT is stolen. */
json_t *bx_mcp_result (json_t *id, json_t *result);
json_t *bx_mcp_error (json_t *id, int code, const char *message);
json_t *bx_mcp_notification (const char *method, json_t *params);

/* Where a request's response and notifications go.  send steals MSG and may be called from
 * any thread; done is called once after the response (or instead of it, when none is sent).
 * PEER, when not NULL, says who sent the request (the HTTP transport's client, as
 * "http 127.0.0.1:54321 uid 1000"); a tools/call sends it to brokerd for its audit line
 * (bx_valid_peer holds).  It need only live during bx_mcp_server_handle.
 *
 * VERSION is the revision the request is read and answered under when the transport says so
 * with each request (HTTP: its MCP-Protocol-Version header, or the default); NULL (stdio):
 * the session's, which its initialize set. */
struct bx_mcp_sink
{
  void (*send) (struct bx_mcp_sink *sink, json_t *msg);
  void (*done) (struct bx_mcp_sink *sink);
  const char *peer;
  enum bx_mcp_transport transport;
  const struct bx_mcp_version *version;
};

struct bx_mcp_options
{
  const char *socket;
  uint64_t timeout_ms;
  const char *session;
  unsigned max_calls; /* tools/call in flight at once */
  /* While a call waits for a person's approval, a progress notification this often, so a
   * client whose request timeout restarts on progress keeps waiting.  0: only the first. */
  uint64_t progress_ms;
  /* While a client is connected, brokerd is asked again this often what it grants (over
   * stdio by a thread of its own, which tells the client when the tools change; over HTTP
   * by a tools/list that finds the kept answer older).  0: only at initialize. */
  uint64_t refresh_ms;
};

struct bx_mcp_server;

struct bx_mcp_server *bx_mcp_server_new (const struct bx_mcp_options *opts);
/* Handles one message; answers through SINK, now or later from a call's thread, and then
 * calls sink->done exactly once (also when there is nothing to answer: a notification, a
 * response, a cancelled call). */
void bx_mcp_server_handle (struct bx_mcp_server *srv, const char *text, size_t len,
                           struct bx_mcp_sink *sink);
/* Cancels every call in flight and waits until their threads are done. */
void bx_mcp_server_shutdown (struct bx_mcp_server *srv);
void bx_mcp_server_free (struct bx_mcp_server *srv);
/* SINK (the stdio transport's; it must live until bx_mcp_server_shutdown) receives what the
 * server sends of its own accord: notifications/tools/list_changed, once the client has sent
 * notifications/initialized.  With none (NULL, HTTP: no stream of the server's own), the
 * tools capability says listChanged false. */
void bx_mcp_server_notify_to (struct bx_mcp_server *srv, struct bx_mcp_sink *sink);

/* mcp_tools.c: GRANTS is brokerd's answer to a grants_request, or NULL when it is not known (then
 * every tool is listed, as written in the table).  After the four come the tools of the
 * owner's MCP servers that the grants carry (bx_mcp_server_tool_grant). */
json_t *bx_mcp_tools_list (const struct bx_mcp_version *v, const json_t *grants);
/* True when NAME is one of the four tools. */
bool bx_mcp_tool_known (const char *name);
/* The tool's arguments as brokerd takes them: a copy with null optional fields removed. */
json_t *bx_mcp_tool_arguments (const char *name, const json_t *arguments);
/* The grant (of GRANTS) whose MCP server offers NAME (SERVER.TOOL), or NULL: NAME must be
 * listed in that grant's mcp_tools, carry its server's name, be none of the four and not have
 * been offered by an earlier grant. */
const json_t *bx_mcp_server_tool_grant (const json_t *grants, const char *name);
/* Whether TOOL, an entry of a grant's mcp_tools in GRANTS, is offered: the first entry of its
 * name, for which bx_mcp_server_tool_grant holds (a name listed twice is offered once). */
bool bx_mcp_server_tool_offered (const json_t *grants, const json_t *tool);
/* The tools/call result for brokerd's answer; SERVER_TOOL when the call was an MCP server's
 * tool, whose result is passed on as the server gave it. */
json_t *bx_mcp_tool_result (const struct bx_client_response *r, const struct bx_mcp_version *v,
                            bool server_tool);

/* mcp_grants.c.  GRANTS as for bx_mcp_tools_list (its types checked by bx_client_grants).  What
 * the grants give TOOL, one or more sentences ("Granted: the folder /srv/notes."), or NULL
 * when no grant lists it.  Free it. */
char *bx_mcp_grants_text (const json_t *grants, enum bx_tool tool);
/* The session's instructions: the grants per tool, then per MCP server the tools tools/list
 * offers of it (their names bounded) and the grant they run under; or, when GRANTS is NULL,
 * that the tool broker could not be reached and WHY_NOT.  Free it. */
char *bx_mcp_instructions (const json_t *grants, const char *why_not);

/* mcp_offer.c: brokerd's grants answer as this server keeps it (the ask's deadline is
 * TIMEOUT_MS, at most 5 seconds; REFRESH_MS as in bx_mcp_options). */
struct bx_mcp_offer;
struct bx_mcp_offer *bx_mcp_offer_new (const char *socket, uint64_t timeout_ms,
                                       uint64_t refresh_ms);
void bx_mcp_offer_free (struct bx_mcp_offer *o);
/* Asks brokerd now (initialize): its answer replaces what is kept; when it has none, an
 * answer kept from before stays, and otherwise why there is none is kept. */
void bx_mcp_offer_ask (struct bx_mcp_offer *o);
/* tools/list from what is kept; with MAY_ASK, brokerd is asked again first when that is
 * older than refresh_ms (a failed ask keeps it). */
json_t *bx_mcp_offer_tools_list (struct bx_mcp_offer *o, const struct bx_mcp_version *v,
                                 bool may_ask);
/* Whether NAME is an MCP server's tool that what is kept offers. */
bool bx_mcp_offer_server_tool (struct bx_mcp_offer *o, const char *name);
/* bx_mcp_instructions of what is kept.  Free it. */
char *bx_mcp_offer_instructions (struct bx_mcp_offer *o);
/* Starts asking brokerd again every refresh_ms on a thread of its own, sending
 * notifications/tools/list_changed to SINK each time what tools/list answers changes.  Once:
 * a second call while it runs does nothing. */
void bx_mcp_offer_watch (struct bx_mcp_offer *o, struct bx_mcp_sink *sink);
/* Stops it and waits for its thread (at most one ask's deadline). */
void bx_mcp_offer_unwatch (struct bx_mcp_offer *o);

/* Transports: return the exit status of `boxmaker mcp`. */
int bx_mcp_stdio (struct bx_mcp_server *srv, int in_fd, int out_fd);

struct bx_mcp_http_options
{
  const char *address;    /* host:port, [v6]:port, or a Unix socket path (starts with /) */
  const char *token_file; /* NULL: no bearer token (a Unix socket only) */
  const char **origins;   /* NULL-terminated extra allowed origins */
};
int bx_mcp_http (struct bx_mcp_server *srv, const struct bx_mcp_http_options *opts);

int bx_mcp_main (int argc, char **argv);

#endif

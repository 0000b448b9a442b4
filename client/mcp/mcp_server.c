/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP session: see mcp.h.  Each tools/call is one brokerd call through the client
 * library on a thread of its own, so several are in flight; a notifications/cancelled for
 * one closes its brokerd connection (bx_client_cancel), which cancels it in brokerd. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "mcp.h"

/* The most members a batch may have.  Bytes are bounded by the transport; this bounds the
 * work one message can ask for (each tools/call beyond max_calls is answered "busy"). */
#define BATCH_MAX 1024

struct call
{
  struct bx_mcp_server *srv;
  struct call *next;
  json_t *id;             /* the request's id */
  json_t *progress_token; /* NULL: the client asked for no progress */
  char *tool;
  bool server_tool; /* SERVER.TOOL, an owner's MCP server's */
  json_t *arguments;
  char *peer; /* the sink's, for brokerd's audit line; NULL for none */
  char call_id[64];
  struct bx_client_cancel *cancel;
  struct bx_mcp_sink *sink;
  const struct bx_mcp_version *version; /* the request's: what its answers may carry */
  char *pending;          /* what a person is asked to approve, once brokerd said so (under lock) */
  int progress;           /* the last progress value sent (under lock) */
  char *unavailable_line; /* the client library's line when brokerd could not be reached */
};

struct bx_mcp_server
{
  struct bx_mcp_options opts;
  pthread_mutex_t lock;
  pthread_cond_t idle; /* signalled when in_flight drops to 0 */
  struct call *calls;  /* in flight */
  unsigned in_flight;
  unsigned long counter;
  /* The progress ticker: started with the first pending call, stopped at shutdown. */
  pthread_t ticker;
  bool ticking;
  bool stopping;
  pthread_cond_t wake;
  /* The stdio session's revision, set by its initialize (the latest until then).  Only the
   * reader's thread uses it: a call keeps its own. */
  const struct bx_mcp_version *version;
  /* Whether an initialize was answered: the client's notifications/initialized says it read
   * that answer, and a list_changed before it would come before the capability it depends on.
   * The reader's thread only, as version. */
  bool initialize_answered;
  /* What brokerd says it grants, as kept and asked again.  brokerd's config is the one place
   * grants are written. */
  struct bx_mcp_offer *offer;
  /* Where the server's own notifications go (the stdio transport's sink), or NULL. */
  struct bx_mcp_sink *notify;
};

struct bx_mcp_server *
bx_mcp_server_new (const struct bx_mcp_options *opts)
{
  struct bx_mcp_server *srv = bx_xmalloc (sizeof *srv);
  memset (srv, 0, sizeof *srv);
  srv->opts = *opts;
  srv->version = bx_mcp_version_latest ();
  pthread_mutex_init (&srv->lock, NULL);
  pthread_cond_init (&srv->idle, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&srv->wake, &attr);
  pthread_condattr_destroy (&attr);
  srv->offer = bx_mcp_offer_new (opts->socket, opts->timeout_ms, opts->refresh_ms);
  return srv;
}

void
bx_mcp_server_shutdown (struct bx_mcp_server *srv)
{
  pthread_mutex_lock (&srv->lock);
  for (struct call *c = srv->calls; c != NULL; c = c->next)
    bx_client_cancel (c->cancel);
  while (srv->in_flight > 0)
    pthread_cond_wait (&srv->idle, &srv->lock);
  bool ticking = srv->ticking;
  srv->stopping = true;
  srv->ticking = false;
  pthread_cond_broadcast (&srv->wake);
  pthread_mutex_unlock (&srv->lock);
  if (ticking)
    pthread_join (srv->ticker, NULL);
  bx_mcp_offer_unwatch (srv->offer);
  pthread_mutex_lock (&srv->lock);
  srv->stopping = false;
  pthread_mutex_unlock (&srv->lock);
}

void
bx_mcp_server_free (struct bx_mcp_server *srv)
{
  if (srv == NULL)
    return;
  bx_mcp_server_shutdown (srv);
  pthread_mutex_destroy (&srv->lock);
  pthread_cond_destroy (&srv->idle);
  pthread_cond_destroy (&srv->wake);
  bx_mcp_offer_free (srv->offer);
  free (srv);
}

static void
reply (struct bx_mcp_sink *sink, json_t *msg)
{
  if (msg != NULL)
    sink->send (sink, msg);
  sink->done (sink);
}

void
bx_mcp_server_notify_to (struct bx_mcp_server *srv, struct bx_mcp_sink *sink)
{
  srv->notify = sink;
}

/* MCP's version negotiation: answer with the client's revision when it is spoken here (over this
 * transport), otherwise with the latest spoken here (the client then decides whether it can go on).
 * A stdio session keeps the answer; over HTTP each request names its own revision. */
static json_t *
initialize (struct bx_mcp_server *srv, const struct bx_mcp_message *m,
            const struct bx_mcp_sink *sink)
{
  /* The one thing negotiation needs; without it the client would be told a revision it
   * never asked for, as if it had. */
  const char *asked = json_string_value (json_object_get (m->params, "protocolVersion"));
  if (asked == NULL)
    return bx_mcp_error (m->id, BX_MCP_INVALID_PARAMS,
                         m->params == NULL
                             ? "Invalid params: initialize needs \"params\" with "
                               "\"protocolVersion\""
                             : "Invalid params: \"protocolVersion\" must be a string");
  const struct bx_mcp_version *v = bx_mcp_version_find (asked, sink->transport);
  if (v == NULL)
    v = bx_mcp_version_latest ();
  if (sink->version == NULL)
    {
      srv->version = v;
      srv->initialize_answered = true;
    }
  json_t *info = json_pack ("{s:s, s:s}", "name", "boxmaker", "version", BX_VERSION);
  if (v->titles)
    json_object_set_new (info, "title", json_string ("boxmaker tool broker"));
  bx_mcp_offer_ask (srv->offer);
  cleanup_free char *instructions = bx_mcp_offer_instructions (srv->offer);
  /* listChanged only where this server can say so: a transport with a stream of its own. */
  bool list_changed = srv->notify != NULL && sink->transport == BX_MCP_STDIO;
  return bx_mcp_result (m->id,
                        json_pack ("{s:s, s:{s:{s:b}}, s:o, s:s}", "protocolVersion", v->name,
                                   "capabilities", "tools", "listChanged", list_changed,
                                   "serverInfo", info, "instructions", instructions));
}

/* Over stdio the watcher keeps the grants fresh, so the reader never waits for brokerd here;
 * over HTTP (no watcher, no stream to notify on) a tools/list asks again when they are old. */
static json_t *
tools_list (struct bx_mcp_server *srv, const struct bx_mcp_version *v,
            const struct bx_mcp_sink *sink)
{
  return bx_mcp_offer_tools_list (srv->offer, v, sink->transport == BX_MCP_HTTP);
}

static void
log_line (const char *line, void *data)
{
  fprintf (stderr, "boxmaker mcp: %s\n", line);
}

/* A call's log: as log_line, and the line that says why brokerd could not be reached is
 * kept for the model (call_thread), which otherwise reads only that it could not. */
static void
call_log_line (const char *line, void *data)
{
  struct call *c = data;
  log_line (line, NULL);
  if (strncmp (line, BX_CLIENT_UNAVAILABLE, strlen (BX_CLIENT_UNAVAILABLE)) == 0)
    {
      free (c->unavailable_line);
      c->unavailable_line = bx_xstrdup (line);
    }
}

/* One notifications/progress for C, with the next progress value.  Under srv->lock: a call
 * leaves the list (under the lock) before its sink is done, so C's sink is still there. */
static void
send_progress (struct call *c)
{
  c->progress++;
  json_t *params
      = json_pack ("{s:O, s:i}", "progressToken", c->progress_token, "progress", c->progress);
  if (c->version->progress_message)
    json_object_set_new (params, "message", json_string (c->pending));
  c->sink->send (c->sink, bx_mcp_notification ("notifications/progress", params));
}

/* Every progress_ms, a progress notification for each call still waiting for approval. */
static void *
ticker (void *arg)
{
  struct bx_mcp_server *srv = arg;
  pthread_mutex_lock (&srv->lock);
  while (!srv->stopping)
    {
      struct timespec ts;
      clock_gettime (CLOCK_MONOTONIC, &ts);
      uint64_t ns = (uint64_t)ts.tv_nsec + (srv->opts.progress_ms % 1000) * 1000000;
      ts.tv_sec += (time_t)(srv->opts.progress_ms / 1000 + ns / 1000000000);
      ts.tv_nsec = (long)(ns % 1000000000);
      if (pthread_cond_timedwait (&srv->wake, &srv->lock, &ts) != ETIMEDOUT)
        continue;
      for (struct call *c = srv->calls; c != NULL; c = c->next)
        if (c->pending != NULL)
          send_progress (c);
    }
  pthread_mutex_unlock (&srv->lock);
  return NULL;
}

static void
on_pending (const struct bx_client_pending *p, void *data)
{
  struct call *c = data;
  if (c->progress_token == NULL)
    return;
  time_t secs = (time_t)(p->expires / 1000);
  struct tm tm;
  char when[64] = "?";
  if (gmtime_r (&secs, &tm) != NULL)
    strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  char *message = bx_xasprintf ("waiting for approval: %s (expires %s)", p->approval, when);
  struct bx_mcp_server *srv = c->srv;
  pthread_mutex_lock (&srv->lock);
  c->pending = message;
  send_progress (c);
  if (!srv->ticking && !srv->stopping && srv->opts.progress_ms > 0
      && pthread_create (&srv->ticker, NULL, ticker, srv) == 0)
    srv->ticking = true;
  pthread_mutex_unlock (&srv->lock);
}

static void
call_free (struct call *c)
{
  json_decref (c->id);
  json_decref (c->progress_token);
  json_decref (c->arguments);
  free (c->tool);
  free (c->peer);
  free (c->pending);
  free (c->unavailable_line);
  bx_client_cancel_free (c->cancel);
  free (c);
}

static void *
call_thread (void *arg)
{
  struct call *c = arg;
  struct bx_mcp_server *srv = c->srv;
  struct bx_client_options opts = {
    .socket = srv->opts.socket,
    .timeout_ms = srv->opts.timeout_ms,
    .log = call_log_line,
    .on_pending = on_pending,
    .data = c,
    .cancel = c->cancel,
    .refusals = true,
    .peer = c->peer,
  };
  struct bx_client_response r;
  cleanup_error bx_error err = NULL;
  json_t *msg;
  if (bx_client_call (&opts, c->call_id, srv->opts.session, c->tool, c->arguments, &r, &err) < 0)
    msg = bx_mcp_error (c->id, BX_MCP_INTERNAL_ERROR, bx_error_msg (err));
  else
    {
      /* The model reads why and where to look, as the log says it: the fixed sentence first,
       * then the reason and the runbook's entry. */
      if (r.unavailable && c->unavailable_line != NULL)
        {
          free (r.message);
          r.message = c->unavailable_line;
          c->unavailable_line = NULL;
        }
      /* A request the client cancelled gets no response (MCP's cancellation rule). */
      msg = r.cancelled
                ? NULL
                : bx_mcp_result (c->id, bx_mcp_tool_result (&r, c->version, c->server_tool));
      bx_client_response_free (&r);
    }

  pthread_mutex_lock (&srv->lock);
  for (struct call **p = &srv->calls; *p != NULL; p = &(*p)->next)
    if (*p == c)
      {
        *p = c->next;
        break;
      }
  pthread_mutex_unlock (&srv->lock);

  reply (c->sink, msg);
  call_free (c);

  pthread_mutex_lock (&srv->lock);
  if (--srv->in_flight == 0)
    pthread_cond_broadcast (&srv->idle);
  pthread_mutex_unlock (&srv->lock);
  return NULL;
}

/* A tools/call: checked here, then run on its own thread.  Every mistake the model made in
 * the arguments is left to brokerd, whose strict parser names the field. */
static void
tools_call (struct bx_mcp_server *srv, const struct bx_mcp_message *m,
            const struct bx_mcp_version *v, struct bx_mcp_sink *sink)
{
  const char *name = json_string_value (json_object_get (m->params, "name"));
  json_t *arguments = json_object_get (m->params, "arguments");
  if (name == NULL)
    return reply (sink, bx_mcp_error (m->id, BX_MCP_INVALID_PARAMS,
                                      "Invalid params: \"name\" must be a string"));
  bool server_tool = bx_mcp_offer_server_tool (srv->offer, name);
  if (!bx_mcp_tool_known (name) && !server_tool)
    {
      cleanup_free char *shown = bx_printable (name, strlen (name), 64);
      cleanup_free char *text = bx_xasprintf ("Unknown tool: %s", shown);
      return reply (sink, bx_mcp_error (m->id, BX_MCP_INVALID_PARAMS, text));
    }
  if (arguments != NULL && !json_is_object (arguments) && !json_is_null (arguments))
    return reply (sink, bx_mcp_error (m->id, BX_MCP_INVALID_PARAMS,
                                      "Invalid params: \"arguments\" must be an object"));
  json_t *meta = json_object_get (m->params, "_meta");
  json_t *token = json_object_get (meta, "progressToken");
  if (token != NULL && !json_is_string (token) && !json_is_integer (token))
    token = NULL;

  struct call *c = bx_xmalloc (sizeof *c);
  memset (c, 0, sizeof *c);
  c->srv = srv;
  c->id = json_incref (m->id);
  c->progress_token = json_incref (token);
  c->tool = bx_xstrdup (name);
  c->peer = sink->peer ? bx_xstrdup (sink->peer) : NULL;
  json_auto_t *empty = json_object ();
  c->server_tool = server_tool;
  /* A server's tool's arguments go as given: its schema is the server's to enforce. */
  c->arguments = server_tool
                     ? json_deep_copy (json_is_object (arguments) ? arguments : empty)
                     : bx_mcp_tool_arguments (name, json_is_object (arguments) ? arguments : empty);
  c->cancel = bx_client_cancel_new ();
  c->sink = sink;
  c->version = v;

  pthread_mutex_lock (&srv->lock);
  if (srv->in_flight >= srv->opts.max_calls)
    {
      pthread_mutex_unlock (&srv->lock);
      call_free (c);
      struct bx_client_response busy = {
        .kind = BX_CLIENT_FAILED,
        .message = bx_xasprintf ("too many tool calls in flight (at most %u); wait for one to "
                                 "end",
                                 srv->opts.max_calls),
      };
      json_t *msg = bx_mcp_result (m->id, bx_mcp_tool_result (&busy, v, false));
      bx_client_response_free (&busy);
      return reply (sink, msg);
    }
  snprintf (c->call_id, sizeof c->call_id, "mcp-%ld-%lu", (long)getpid (), ++srv->counter);
  srv->in_flight++;
  c->next = srv->calls;
  srv->calls = c;
  pthread_mutex_unlock (&srv->lock);

  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&attr, 256 * 1024);
  pthread_t th;
  int e = pthread_create (&th, &attr, call_thread, c);
  pthread_attr_destroy (&attr);
  if (e != 0)
    {
      pthread_mutex_lock (&srv->lock);
      srv->calls = c->next; /* still first: only this thread adds */
      srv->in_flight--;
      pthread_mutex_unlock (&srv->lock);
      json_t *id = json_incref (c->id);
      call_free (c);
      json_t *msg = bx_mcp_error (id, BX_MCP_INTERNAL_ERROR,
                                  "Internal error: cannot start a "
                                  "thread for the call");
      json_decref (id);
      reply (sink, msg);
    }
}

static void
cancelled (struct bx_mcp_server *srv, const json_t *params)
{
  json_t *id = json_object_get (params, "requestId");
  if (id == NULL)
    return;
  pthread_mutex_lock (&srv->lock);
  for (struct call *c = srv->calls; c != NULL; c = c->next)
    if (json_equal (c->id, id))
      bx_client_cancel (c->cancel);
  pthread_mutex_unlock (&srv->lock);
}

/* One message that is not a batch: answered through SINK (sink->done called once). */
static void
dispatch (struct bx_mcp_server *srv, struct bx_mcp_message *m, const struct bx_mcp_version *v,
          struct bx_mcp_sink *sink, bool in_batch)
{
  json_t *msg = NULL;
  switch (m->kind)
    {
    case BX_MCP_INVALID:
      msg = bx_mcp_error (m->id, m->error_code, m->error_text);
      break;
    case BX_MCP_BATCH: /* bx_mcp_check never says so; a batch is handled before */
    case BX_MCP_RESPONSE:
      break; /* this server sends no requests: nothing was asked */
    case BX_MCP_NOTIFICATION:
      if (strcmp (m->method, "notifications/cancelled") == 0)
        cancelled (srv, m->params);
      /* The server may notify the client of its own accord once it says it is ready, which it
       * can only be once it read initialize's answer. */
      else if (strcmp (m->method, "notifications/initialized") == 0 && srv->notify != NULL
               && srv->initialize_answered)
        bx_mcp_offer_watch (srv->offer, srv->notify);
      /* Any other notification: nothing to do. */
      break;
    case BX_MCP_REQUEST:
      if (strcmp (m->method, "initialize") == 0)
        /* 2025-03-26: "The initialize request MUST NOT be part of a JSON-RPC batch". */
        msg = in_batch ? bx_mcp_error (m->id, BX_MCP_INVALID_REQUEST,
                                       "Invalid Request: initialize must not be part of a batch")
                       : initialize (srv, m, sink);
      else if (strcmp (m->method, "ping") == 0)
        msg = bx_mcp_result (m->id, json_object ());
      else if (strcmp (m->method, "tools/list") == 0)
        msg = bx_mcp_result (m->id, tools_list (srv, v, sink));
      else if (strcmp (m->method, "tools/call") == 0)
        return tools_call (srv, m, v, sink);
      else
        {
          cleanup_free char *shown = bx_printable (m->method, strlen (m->method), 64);
          cleanup_free char *t = bx_xasprintf ("Method not found: %s", shown);
          msg = bx_mcp_error (m->id, BX_MCP_METHOD_NOT_FOUND, t);
        }
      break;
    }
  reply (sink, msg);
}

/* A batch's members answer into one of these; when the last is done, their responses go out
 * as one array (none at all when every member was a notification or a response, as JSON-RPC
 * 2.0 says).  A member's notifications (progress) go out at once. */
struct batch
{
  struct bx_mcp_sink sink;
  struct bx_mcp_sink *outer;
  pthread_mutex_t lock;
  json_t *responses;
  size_t open; /* members not yet done, and one for the loop that hands them out */
};

static void
batch_send (struct bx_mcp_sink *sink, json_t *msg)
{
  struct batch *b = (struct batch *)sink;
  if (json_object_get (msg, "method") != NULL)
    return b->outer->send (b->outer, msg);
  pthread_mutex_lock (&b->lock);
  json_array_append_new (b->responses, msg);
  pthread_mutex_unlock (&b->lock);
}

static void
batch_done (struct bx_mcp_sink *sink)
{
  struct batch *b = (struct batch *)sink;
  pthread_mutex_lock (&b->lock);
  bool last = --b->open == 0;
  pthread_mutex_unlock (&b->lock);
  if (!last)
    return;
  struct bx_mcp_sink *outer = b->outer;
  if (json_array_size (b->responses) > 0)
    outer->send (outer, json_incref (b->responses));
  json_decref (b->responses);
  pthread_mutex_destroy (&b->lock);
  free (b);
  outer->done (outer);
}

static void
batch (struct bx_mcp_server *srv, json_t *members, const struct bx_mcp_version *v,
       struct bx_mcp_sink *sink)
{
  if (!v->batches)
    {
      cleanup_free char *text
          = bx_xasprintf ("Invalid Request: batches are not part of MCP %s", v->name);
      return reply (sink, bx_mcp_error (NULL, BX_MCP_INVALID_REQUEST, text));
    }
  if (json_array_size (members) > BATCH_MAX)
    {
      cleanup_free char *text
          = bx_xasprintf ("Invalid Request: a batch holds at most %d messages", BATCH_MAX);
      return reply (sink, bx_mcp_error (NULL, BX_MCP_INVALID_REQUEST, text));
    }
  struct batch *b = bx_xmalloc (sizeof *b);
  *b = (struct batch){
    .sink = { .send = batch_send,
              .done = batch_done,
              .peer = sink->peer,
              .transport = sink->transport,
              .version = sink->version },
    .outer = sink,
    .responses = json_array (),
    .open = json_array_size (members) + 1,
  };
  pthread_mutex_init (&b->lock, NULL);
  size_t i;
  json_t *member;
  json_array_foreach (members, i, member)
  {
    struct bx_mcp_message m;
    bx_mcp_check (member, &m);
    dispatch (srv, &m, v, &b->sink, true);
    bx_mcp_message_clear (&m);
  }
  batch_done (&b->sink);
}

void
bx_mcp_server_handle (struct bx_mcp_server *srv, const char *text, size_t len,
                      struct bx_mcp_sink *sink)
{
  const struct bx_mcp_version *v = sink->version != NULL ? sink->version : srv->version;
  struct bx_mcp_message m;
  bx_mcp_parse (text, len, &m);
  if (m.kind == BX_MCP_BATCH)
    batch (srv, m.root, v, sink);
  else
    dispatch (srv, &m, v, sink, false);
  bx_mcp_message_clear (&m);
}

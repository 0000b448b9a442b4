/* SPDX-License-Identifier: Apache-2.0 */
/* What this server offers: brokerd's answer to a grants_request, kept for tools/list,
 * tools/call and the instructions, and asked again while a client is connected.  brokerd
 * lists its MCP servers' tools at start and at each reload, in the background, so the tools a
 * session may use change while it lasts; a stdio client is told so
 * (notifications/tools/list_changed) and lists them again.  See mcp.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/printable.h"

#include "mcp.h"

/* How long one grants_request may take: a client waits for initialize's answer, and without
 * the grants the session still works as it did before brokerd could say. */
#define ASK_TIMEOUT_MS 5000

struct bx_mcp_offer
{
  const char *socket;
  uint64_t ask_ms;     /* each grants_request's deadline */
  uint64_t refresh_ms; /* 0: asked at initialize only */
  pthread_mutex_t lock;
  json_t *grants;      /* brokerd's last answer, or NULL */
  char *why_not;       /* when grants is NULL: why */
  int64_t asked_at;    /* when brokerd was last asked (monotonic ms) */
  uint64_t asks_begun; /* asks begun so far */
  uint64_t kept_seq;   /* the number of the ask whose answer (or why) is kept */
  bool asking;         /* a tools/list is asking again (HTTP) */
  bool failing;        /* the last ask failed, which was logged: the next failures are not */
  /* The watcher: started at notifications/initialized, stopped by bx_mcp_offer_unwatch. */
  pthread_cond_t wake;
  pthread_t watcher;
  bool watching;
  bool stopping;
  struct bx_mcp_sink *sink;
};

struct bx_mcp_offer *
bx_mcp_offer_new (const char *socket, uint64_t timeout_ms, uint64_t refresh_ms)
{
  struct bx_mcp_offer *o = bx_xzalloc (sizeof *o);
  o->socket = socket;
  o->ask_ms = timeout_ms < ASK_TIMEOUT_MS ? timeout_ms : ASK_TIMEOUT_MS;
  o->refresh_ms = refresh_ms;
  pthread_mutex_init (&o->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&o->wake, &attr);
  pthread_condattr_destroy (&attr);
  return o;
}

void
bx_mcp_offer_free (struct bx_mcp_offer *o)
{
  if (o == NULL)
    return;
  bx_mcp_offer_unwatch (o);
  pthread_mutex_destroy (&o->lock);
  pthread_cond_destroy (&o->wake);
  json_decref (o->grants);
  free (o->why_not);
  free (o);
}

/* One grants_request, under its own deadline: 0 and *GRANTS, or -1 and *WHY (one line). */
static int
ask (struct bx_mcp_offer *o, json_t **grants, char **why)
{
  struct bx_client_options copts = { .socket = o->socket, .timeout_ms = o->ask_ms };
  cleanup_error bx_error err = NULL;
  *why = NULL;
  if (bx_client_grants (&copts, grants, &err) == 0)
    return 0;
  *why = bx_xstrdup (bx_error_msg (err));
  bx_one_line (*why, 512, '?');
  return -1;
}

/* Asks brokerd and keeps its answer; true when what tools/list answers changed.  An answer that
 * cannot be had keeps the last one: brokerd restarting for a moment is no reason to list every
 * tool without its grants, and each call says itself that brokerd is unavailable; with none
 * kept yet, why there is none is kept for the instructions.  Asks overlap (an initialize over
 * HTTP beside a tools/list or the watcher's): the answer to an ask begun before the kept one's
 * is dropped, so an old answer never replaces a newer one.  AT_INITIALIZE: the failure is
 * logged whatever came before, as initialize's own. */
static bool
ask_and_keep (struct bx_mcp_offer *o, bool at_initialize)
{
  pthread_mutex_lock (&o->lock);
  uint64_t seq = ++o->asks_begun;
  pthread_mutex_unlock (&o->lock);
  json_t *grants = NULL;
  char *why = NULL;
  bool failed = ask (o, &grants, &why) < 0;
  /* Compared as the newest revision lists them, which carries every field an older one does. */
  const struct bx_mcp_version *v = bx_mcp_version_latest ();
  json_auto_t *after = failed ? NULL : bx_mcp_tools_list (v, grants);
  bool changed = false, log = false;
  pthread_mutex_lock (&o->lock);
  o->asked_at = bx_now_ms ();
  if (seq > o->kept_seq)
    {
      if (!failed)
        {
          json_auto_t *before = bx_mcp_tools_list (v, o->grants);
          changed = !json_equal (before, after);
          json_decref (o->grants);
          free (o->why_not);
          o->grants = grants;
          o->why_not = NULL;
          o->kept_seq = seq;
          grants = NULL;
        }
      else if (o->grants == NULL)
        {
          free (o->why_not);
          o->why_not = bx_xstrdup (why);
          o->kept_seq = seq;
        }
      /* A run of failures is logged once: the first of it says so. */
      log = failed && (at_initialize || !o->failing);
      o->failing = failed;
    }
  pthread_mutex_unlock (&o->lock);
  if (log && at_initialize)
    fprintf (stderr, "boxmaker mcp: cannot learn the grants: %s\n", why);
  else if (log)
    fprintf (stderr,
             "boxmaker mcp: cannot learn the grants again: %s; the tools stay as they were\n", why);
  json_decref (grants);
  free (why);
  return changed;
}

void
bx_mcp_offer_ask (struct bx_mcp_offer *o)
{
  ask_and_keep (o, true);
}

json_t *
bx_mcp_offer_tools_list (struct bx_mcp_offer *o, const struct bx_mcp_version *v, bool may_ask)
{
  if (may_ask)
    {
      /* One request asks at a time; the others answer from what is kept meanwhile. */
      pthread_mutex_lock (&o->lock);
      bool stale
          = o->refresh_ms > 0 && !o->asking && bx_now_ms () - o->asked_at >= (int64_t)o->refresh_ms;
      if (stale)
        o->asking = true;
      pthread_mutex_unlock (&o->lock);
      if (stale)
        {
          ask_and_keep (o, false);
          pthread_mutex_lock (&o->lock);
          o->asking = false;
          pthread_mutex_unlock (&o->lock);
        }
    }
  pthread_mutex_lock (&o->lock);
  json_t *list = bx_mcp_tools_list (v, o->grants);
  pthread_mutex_unlock (&o->lock);
  return list;
}

bool
bx_mcp_offer_server_tool (struct bx_mcp_offer *o, const char *name)
{
  pthread_mutex_lock (&o->lock);
  bool offered = !bx_mcp_tool_known (name) && o->grants != NULL
                 && bx_mcp_server_tool_grant (o->grants, name) != NULL;
  pthread_mutex_unlock (&o->lock);
  return offered;
}

char *
bx_mcp_offer_instructions (struct bx_mcp_offer *o)
{
  pthread_mutex_lock (&o->lock);
  char *text = bx_mcp_instructions (o->grants, o->why_not);
  pthread_mutex_unlock (&o->lock);
  return text;
}

/* Every refresh_ms, brokerd is asked again; when the tools changed, the client is told.  The
 * wait is a timed one on a condition, so the thread sleeps between asks, and the reader of
 * the client's messages never waits for brokerd. */
static void *
watch (void *arg)
{
  struct bx_mcp_offer *o = arg;
  pthread_mutex_lock (&o->lock);
  while (!o->stopping)
    {
      struct timespec ts;
      clock_gettime (CLOCK_MONOTONIC, &ts);
      uint64_t ns = (uint64_t)ts.tv_nsec + (o->refresh_ms % 1000) * 1000000;
      ts.tv_sec += (time_t)(o->refresh_ms / 1000 + ns / 1000000000);
      ts.tv_nsec = (long)(ns % 1000000000);
      if (pthread_cond_timedwait (&o->wake, &o->lock, &ts) != ETIMEDOUT)
        continue;
      pthread_mutex_unlock (&o->lock);
      bool changed = ask_and_keep (o, false);
      /* Sent without the lock: a client slow to read its output must not hold up tools/list.
       * The sink lives until bx_mcp_offer_unwatch has joined this thread. */
      if (changed)
        o->sink->send (o->sink,
                       bx_mcp_notification ("notifications/tools/list_changed", json_object ()));
      pthread_mutex_lock (&o->lock);
    }
  pthread_mutex_unlock (&o->lock);
  return NULL;
}

void
bx_mcp_offer_watch (struct bx_mcp_offer *o, struct bx_mcp_sink *sink)
{
  pthread_mutex_lock (&o->lock);
  if (!o->watching && !o->stopping && o->refresh_ms > 0)
    {
      o->sink = sink;
      int e = pthread_create (&o->watcher, NULL, watch, o);
      if (e == 0)
        o->watching = true;
      else
        fprintf (stderr,
                 "boxmaker mcp: cannot start the thread that asks brokerd again what it "
                 "grants: %s; tools/list changes only at the next initialize\n",
                 strerror (e));
    }
  pthread_mutex_unlock (&o->lock);
}

void
bx_mcp_offer_unwatch (struct bx_mcp_offer *o)
{
  pthread_mutex_lock (&o->lock);
  bool watching = o->watching;
  o->stopping = true;
  pthread_cond_broadcast (&o->wake);
  pthread_mutex_unlock (&o->lock);
  /* At most one grants_request's deadline when brokerd is slow to answer. */
  if (watching)
    pthread_join (o->watcher, NULL);
  pthread_mutex_lock (&o->lock);
  o->watching = false;
  o->stopping = false;
  o->sink = NULL;
  pthread_mutex_unlock (&o->lock);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The servers' tools, listed and kept: see mcp_lists.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/printable.h"
#include "bx/tool_args.h"

#include "daemon.h"
#include "mcp_lists.h"
#include "mcp_server.h"
#include "policy.h"
#include "runner.h"

/* How long the reason of a failed listing may be in the owner's log. */
#define REASON_MAX 300

/* One listing of every server of one config, on a thread of its own. */
struct job
{
  struct bx_mcp_lists *lists;
  struct brokerd *brokerd;
  struct bx_config_hold *hold;
  const struct bx_config *config;
  uint64_t generation;
  pthread_t thread;
  bool done; /* under the lists' lock */
  struct job *next;
};

struct bx_mcp_lists
{
  pthread_mutex_t lock;
  pthread_cond_t ended; /* a job is done */
  uint64_t generation;  /* the refresh whose lists are kept */
  json_t *tools;        /* server name -> its tools (an array) */
  bool stopping;
  struct job *jobs;
};

struct bx_mcp_lists *
bx_mcp_lists_new (void)
{
  struct bx_mcp_lists *l = bx_xzalloc (sizeof *l);
  pthread_mutex_init (&l->lock, NULL);
  pthread_cond_init (&l->ended, NULL);
  l->tools = json_object ();
  return l;
}

/* A string field of SRC copied to DST when it is one of at most MAX bytes. */
static void
keep_text (json_t *dst, const json_t *src, const char *key, size_t max)
{
  const json_t *v = json_object_get (src, key);
  if (json_is_string (v) && json_string_length (v) <= max)
    json_object_set (dst, key, (json_t *)v);
}

/* An object field of SRC copied to DST when its compact JSON is at most MAX bytes. */
static void
keep_object (json_t *dst, const json_t *src, const char *key, size_t max)
{
  const json_t *v = json_object_get (src, key);
  if (!json_is_object (v) || json_dumpb (v, NULL, 0, JSON_COMPACT) > max)
    return;
  json_object_set_new (dst, key, json_deep_copy (v));
}

/* Adds to KEPT the tools of one page (RESULT's "tools") that pass, up to the bound. */
static void
keep_tools (json_t *kept, const json_t *result)
{
  size_t i;
  const json_t *tool;
  json_array_foreach (json_object_get (result, "tools"), i, tool)
  {
    if (json_array_size (kept) >= BX_MCP_LIST_TOOLS_MAX)
      return;
    const json_t *name = json_object_get (tool, "name");
    const char *s = json_string_value (name);
    if (s == NULL || strlen (s) != json_string_length (name) || !bx_mcp_tool_name_valid (s))
      continue;
    bool seen = false;
    size_t j;
    const json_t *other;
    json_array_foreach (kept, j, other) seen
        = seen || strcmp (json_string_value (json_object_get (other, "name")), s) == 0;
    if (seen)
      continue;
    json_t *t = json_pack ("{s:s}", "name", s);
    keep_text (t, tool, "description", BX_MCP_LIST_DESCRIPTION_MAX);
    keep_text (t, tool, "title", BX_MCP_LIST_DESCRIPTION_MAX);
    keep_object (t, tool, "inputSchema", BX_MCP_LIST_SCHEMA_MAX);
    keep_object (t, tool, "outputSchema", BX_MCP_LIST_SCHEMA_MAX);
    keep_object (t, tool, "annotations", BX_MCP_LIST_SCHEMA_MAX);
    json_array_append_new (kept, t);
  }
}

/* One tools/list request (CURSOR: NULL for the first page) of the server of GRANT, run as
 * any call of it.  The page's result object, or NULL with *WHY (to free) saying why not. */
static json_t *
list_page (struct job *job, const struct bx_grant *grant, const char *cursor, int client_fd,
           char **why)
{
  struct bx_tool_args args = { 0 };
  args.tool = BX_TOOL_MCP_CALL;
  args.server = bx_xstrdup (grant->mcp->name);
  args.request = bx_mcp_server_request (
      grant->mcp, "tools/list", cursor != NULL ? json_pack ("{s:s}", "cursor", cursor) : NULL);
  struct bx_decision d;
  bx_policy_decide (job->config, &args, &d);
  struct bx_run_report report;
  cleanup_free char *call = bx_xasprintf ("list-%s", grant->mcp->name);
  struct brokerd *b = job->brokerd;
  json_t *frame = bx_runner_respond (bx_runtimes_of_grant (b->runtimes, d.grant), &d, call, call,
                                     "mcp-lists", b->canceller, client_fd, b->fair, -1, &report);
  bx_decision_clear (&d);
  json_decref (report.egress);
  const json_t *msg = json_object_get (frame, "msg");
  const char *type = json_string_value (json_object_get (msg, "type"));
  const char *content = json_string_value (json_object_get (msg, "content"));
  json_t *result = NULL;
  if (type == NULL || strcmp (type, "result") != 0)
    {
      const char *m = json_string_value (json_object_get (msg, "message"));
      if (m == NULL)
        m = json_string_value (json_object_get (msg, "reason"));
      *why = bx_xstrdup (m != NULL ? m : "the call did not run");
    }
  else if (report.refused || report.truncated || content == NULL)
    *why = bx_xstrdup (content != NULL && report.refused ? content
                                                         : "the list is larger than a result");
  else if ((result = json_loads (content, 0, NULL)) == NULL || !json_is_object (result)
           || !json_is_array (json_object_get (result, "tools")))
    {
      json_decref (result);
      result = NULL;
      *why = bx_xstrdup ("the server's result is not what MCP defines for it");
    }
  if (report.problem != NULL)
    bx_log (LOG_ERR, NULL, "listing %s: %s", grant->mcp->name, report.problem);
  free (report.problem);
  json_decref (frame);
  return result;
}

static bool
still_wanted (struct job *job)
{
  pthread_mutex_lock (&job->lists->lock);
  bool wanted = !job->lists->stopping && job->lists->generation == job->generation;
  pthread_mutex_unlock (&job->lists->lock);
  return wanted;
}

/* Lists the tools of the server of GRANT: the array to keep, or NULL after logging why. */
static json_t *
list_server (struct job *job, const struct bx_grant *grant, int client_fd)
{
  json_t *kept = json_array ();
  cleanup_free char *cursor = NULL;
  for (int page = 0; page < BX_MCP_LIST_PAGES_MAX; page++)
    {
      char *why = NULL;
      json_t *result = list_page (job, grant, cursor, client_fd, &why);
      if (result == NULL)
        {
          /* A listing cancelled because brokerd stops, or made stale by a reload, is no
           * server's failure. */
          bx_one_line (why, REASON_MAX, '?');
          if (still_wanted (job))
            bx_log (LOG_WARNING, NULL, BX_MCP_LIST_FAILED, grant->mcp->name, why);
          free (why);
          json_decref (kept);
          return NULL;
        }
      keep_tools (kept, result);
      const char *next = json_string_value (json_object_get (result, "nextCursor"));
      free (cursor);
      cursor = next != NULL && *next != '\0' ? bx_xstrdup (next) : NULL;
      json_decref (result);
      if (cursor == NULL || json_array_size (kept) >= BX_MCP_LIST_TOOLS_MAX)
        break;
    }
  bx_log (LOG_INFO, NULL, "MCP server %s: %zu tool(s) listed", grant->mcp->name,
          json_array_size (kept));
  return kept;
}

static void *
job_main (void *arg)
{
  struct job *job = arg;
  struct bx_mcp_lists *l = job->lists;
  /* The listing's "client": a socket nobody hangs up, so only brokerd stopping (which
   * cancels every call watched) cancels a listing. */
  int pair[2] = { -1, -1 };
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
    bx_log (LOG_ERR, NULL, "cannot list the MCP servers' tools: %s", strerror (errno));
  for (size_t i = 0; pair[0] >= 0 && i < job->config->n_grants; i++)
    {
      const struct bx_grant *g = &job->config->grants[i];
      if (g->mcp == NULL || g->mcp->name == NULL || !still_wanted (job))
        continue;
      json_t *tools = list_server (job, g, pair[0]);
      pthread_mutex_lock (&l->lock);
      if (tools != NULL && !l->stopping && l->generation == job->generation)
        json_object_set (l->tools, g->mcp->name, tools);
      pthread_mutex_unlock (&l->lock);
      json_decref (tools);
    }
  if (pair[0] >= 0)
    {
      close (pair[0]);
      close (pair[1]);
    }
  bx_live_config_put (job->brokerd->live, job->hold);
  pthread_mutex_lock (&l->lock);
  job->done = true;
  pthread_cond_broadcast (&l->ended);
  pthread_mutex_unlock (&l->lock);
  return NULL;
}

/* Joins and frees the jobs that are done (all of them with ALL, waiting); the lock is held. */
static void
reap (struct bx_mcp_lists *l, struct brokerd *brokerd, bool all)
{
  for (struct job **p = &l->jobs; *p != NULL;)
    {
      struct job *job = *p;
      while (all && !job->done)
        {
          /* A listing between two servers misses one cancel: ask again until it ends. */
          bx_canceller_cancel_all (brokerd->canceller);
          struct timespec until;
          clock_gettime (CLOCK_REALTIME, &until);
          until.tv_nsec += 100 * 1000 * 1000;
          if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
          pthread_cond_timedwait (&l->ended, &l->lock, &until);
        }
      if (!job->done)
        {
          p = &job->next;
          continue;
        }
      *p = job->next;
      pthread_join (job->thread, NULL);
      free (job);
    }
}

void
bx_mcp_lists_refresh (struct bx_mcp_lists *l, struct brokerd *brokerd)
{
  struct job *job = bx_xzalloc (sizeof *job);
  job->lists = l;
  job->brokerd = brokerd;
  job->hold = bx_live_config_get (brokerd->live, &job->config);
  pthread_mutex_lock (&l->lock);
  reap (l, brokerd, false);
  job->generation = ++l->generation;
  json_object_clear (l->tools);
  bool any = false;
  for (size_t i = 0; i < job->config->n_grants; i++)
    any = any || job->config->grants[i].mcp != NULL;
  int r = any ? pthread_create (&job->thread, NULL, job_main, job) : -1;
  if (r == 0)
    {
      job->next = l->jobs;
      l->jobs = job;
    }
  pthread_mutex_unlock (&l->lock);
  if (r != 0)
    {
      if (any)
        bx_log (LOG_ERR, NULL, "cannot list the MCP servers' tools: %s", strerror (r));
      bx_live_config_put (brokerd->live, job->hold);
      free (job);
    }
}

json_t *
bx_mcp_lists_tools (struct bx_mcp_lists *l, const char *server)
{
  pthread_mutex_lock (&l->lock);
  json_t *tools = json_incref (json_object_get (l->tools, server));
  pthread_mutex_unlock (&l->lock);
  return tools;
}

void
bx_mcp_lists_free (struct bx_mcp_lists *l, struct brokerd *brokerd)
{
  if (l == NULL)
    return;
  pthread_mutex_lock (&l->lock);
  l->stopping = true;
  reap (l, brokerd, true);
  pthread_mutex_unlock (&l->lock);
  json_decref (l->tools);
  pthread_cond_destroy (&l->ended);
  pthread_mutex_destroy (&l->lock);
  free (l);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The live config and its reload.  See reload.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"

#include "approvals.h"
#include "options.h"
#include "daemon.h"
#include "grant_root.h"
#include "protect.h"
#include "reload.h"

struct bx_config_hold
{
  struct bx_config *config;
  unsigned refs; /* calls holding it, plus one while it is the live one */
};

struct bx_live_config
{
  pthread_mutex_t lock;
  struct bx_config_hold *current;
  const struct bx_runtimes *runtimes; /* their protected paths hold for a reloaded config too */
};

static struct bx_config_hold *
hold_new (struct bx_config *config)
{
  struct bx_config_hold *h = bx_xzalloc (sizeof *h);
  h->config = config;
  h->refs = 1;
  return h;
}

struct bx_live_config *
bx_live_config_new (struct bx_config *config)
{
  struct bx_live_config *live = bx_xzalloc (sizeof *live);
  pthread_mutex_init (&live->lock, NULL);
  live->current = hold_new (config);
  return live;
}

struct bx_config_hold *
bx_live_config_get (struct bx_live_config *live, const struct bx_config **config)
{
  pthread_mutex_lock (&live->lock);
  struct bx_config_hold *h = live->current;
  h->refs++;
  pthread_mutex_unlock (&live->lock);
  *config = h->config;
  return h;
}

/* LIVE's lock is held. */
static void
drop (struct bx_config_hold *h)
{
  if (--h->refs > 0)
    return;
  bx_config_free (h->config);
  free (h);
}

void
bx_live_config_put (struct bx_live_config *live, struct bx_config_hold *h)
{
  pthread_mutex_lock (&live->lock);
  drop (h);
  pthread_mutex_unlock (&live->lock);
}

static bool
same_string (const char *a, const char *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  return strcmp (a, b) == 0;
}

static bool
same_options (const bx_options *a, const bx_options *b)
{
  size_t n = a ? bx_options_count (a) : 0;
  if (n != (b ? bx_options_count (b) : 0))
    return false;
  for (size_t i = 0; i < n; i++)
    {
      const char *key = bx_options_key (a, i);
      const char *const *ia, *const *ib;
      size_t na, nb;
      int ka = bx_options_lookup (a, key, &ia, &na);
      int kb = bx_options_lookup (b, key, &ib, &nb);
      if (ka != kb || na != nb)
        return false;
      for (size_t k = 0; k < na; k++)
        if (strcmp (ia[k], ib[k]) != 0)
          return false;
    }
  return true;
}

static bool
same_runtimes (const struct bx_config *a, const struct bx_config *b)
{
  if (a->n_runtimes != b->n_runtimes)
    return false;
  for (size_t i = 0; i < a->n_runtimes; i++)
    if (!same_string (a->runtimes[i].name, b->runtimes[i].name)
        || !same_string (a->runtimes[i].module, b->runtimes[i].module)
        || !same_options (a->runtimes[i].options, b->runtimes[i].options))
      return false;
  return true;
}

const char *
bx_config_restart_key (const struct bx_config *a, const struct bx_config *b)
{
  if (!same_string (a->socket, b->socket))
    return "socket";
  if (a->socket_mode != b->socket_mode)
    return "socket_mode";
  if (!same_string (a->home, b->home))
    return "home";
  /* The runtime first: max_running's defaults follow from its slots. */
  if (!same_string (a->runtime_module, b->runtime_module))
    return "runtime.module";
  if (!same_options (a->runtime_options, b->runtime_options))
    return "runtime.options";
  /* The runtimes grants name: each is loaded at start, and a grant's index into them must
   * mean the same runtime in both. */
  if (!same_runtimes (a, b))
    return "runtimes";
  if (a->max_connections != b->max_connections)
    return "max_connections";
  if (a->max_connections_per_uid != b->max_connections_per_uid)
    return "max_connections_per_uid";
  if (a->queue_ms != b->queue_ms)
    return "queue_ms";
  if (a->max_running != b->max_running)
    return "max_running";
  if (a->max_running_per_uid != b->max_running_per_uid)
    return "max_running_per_uid";
  if (a->grace_ms != b->grace_ms)
    return "grace_ms";
  if (a->request_timeout_ms != b->request_timeout_ms)
    return "request_timeout_ms";
  if (!same_string (a->audit, b->audit))
    return "audit";
  if (!same_string (a->metrics_socket, b->metrics_socket))
    return "metrics_socket";
  if (!same_string (a->admin_socket, b->admin_socket))
    return "admin_socket";
  if (a->has_admin_group != b->has_admin_group || a->admin_gid != b->admin_gid)
    return "admin_group";
  /* The owners' side starts with brokerd only when some grant asks for approval. */
  if (bx_config_wants_approvals (a) != bx_config_wants_approvals (b))
    return "approval";
  return NULL;
}

int
bx_live_config_reload (struct bx_live_config *live, bx_error *err)
{
  const struct bx_config *old = NULL;
  struct bx_config_hold *oh = bx_live_config_get (live, &old);
  struct bx_config *fresh = NULL;
  int r = bx_config_load (old->file, &fresh, err);
  if (r == 0)
    {
      const char *key = bx_config_restart_key (old, fresh);
      if (key != NULL)
        {
          r = bx_error_setc (err, EINVAL,
                             "%s: \"%s\" changed, which only a restart applies; the running "
                             "config stays",
                             old->file, key);
          bx_config_free (fresh);
          fresh = NULL;
        }
      else if (live->runtimes != NULL && bx_runtimes_check (fresh, live->runtimes, err) < 0)
        {
          r = -1;
          bx_config_free (fresh);
          fresh = NULL;
        }
    }
  pthread_mutex_lock (&live->lock);
  if (fresh != NULL)
    {
      struct bx_config_hold *was = live->current;
      live->current = hold_new (fresh);
      drop (was);
    }
  drop (oh);
  pthread_mutex_unlock (&live->lock);
  return r;
}

void
bx_live_config_protect (struct bx_live_config *live, const struct bx_runtimes *runtimes)
{
  live->runtimes = runtimes;
}

void
bx_live_config_free (struct bx_live_config *live)
{
  if (live == NULL)
    return;
  drop (live->current);
  pthread_mutex_destroy (&live->lock);
  free (live);
}

void
bx_brokerd_reload (struct brokerd *brokerd)
{
  bx_notify_reloading ();
  cleanup_error bx_error err = NULL;
  if (bx_audit_reopen (brokerd->audit, &err) < 0)
    {
      /* Every call now fails closed until a reload opens it again. */
      bx_log (LOG_CRIT, NULL, "reload: %s; calls are refused until it can be written",
              bx_error_msg (err));
      bx_error_free (&err);
    }
  if (bx_live_config_reload (brokerd->live, &err) < 0)
    {
      bx_log (LOG_ERR, NULL, "reload: the config stays as it was:\n%s", bx_error_msg (err));
      bx_metrics_reload (brokerd->metrics, false);
    }
  else
    {
      bx_metrics_reload (brokerd->metrics, true);
      const struct bx_config *cfg = NULL;
      struct bx_config_hold *h = bx_live_config_get (brokerd->live, &cfg);
      /* A changed grant never matches an approval given for its old content (approvals.h);
       * forgetting those too means that a grant changed back later asks again. */
      bx_approvals_forget_changed (brokerd->approvals, cfg);
      /* The servers may have changed: their tools are listed again. */
      bx_mcp_lists_refresh (brokerd->mcp_lists, brokerd);
      bx_log (LOG_NOTICE, NULL, "reload: %s: %zu grant(s) now serve", cfg->file, cfg->n_grants);
      bx_live_config_put (brokerd->live, h);
    }
  const struct bx_config *cfg = NULL;
  struct bx_config_hold *h = bx_live_config_get (brokerd->live, &cfg);
  bx_notify_reloaded (cfg);
  bx_live_config_put (brokerd->live, h);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* One running brokerd: made and freed.  See daemon.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bx/deadline.h"

#include "daemon.h"
#include "placeholders.h"
#include "server.h"

/* The parts of a brokerd that serve the owners: none unless a grant asks for approval. */
static int
start_approvals (struct brokerd *b, bx_error *err)
{
  if (!bx_config_wants_approvals (b->config))
    return 0;
  if (bx_approvals_start (b, &b->approvals, err) < 0)
    return -1;
  return bx_admin_start (b->config, b->loop, b->approvals, &b->admin, err);
}

static int
on_wake (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)revents;
  (void)userdata;
  uint64_t count;
  (void)TEMP_FAILURE_RETRY (read (fd, &count, sizeof count));
  return 0;
}

/* The loop, and its source that other threads wake it with. */
static int
make_loop (struct brokerd *b, bx_error *err)
{
  int r = sd_event_new (&b->loop);
  if (r < 0)
    return bx_error_set (err, -r, "cannot make brokerd's event loop");
  b->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (b->wake_fd < 0)
    return bx_error_set (err, errno, "cannot make brokerd's event loop");
  r = sd_event_add_io (b->loop, &b->wake_source, b->wake_fd, EPOLLIN, on_wake, b);
  if (r < 0)
    return bx_error_set (err, -r, "cannot make brokerd's event loop");
  return 0;
}

void
bx_brokerd_wake (struct brokerd *b)
{
  uint64_t one = 1;
  (void)TEMP_FAILURE_RETRY (write (b->wake_fd, &one, sizeof one));
}

int
bx_brokerd_run_until (struct brokerd *b, bool (*done) (void *ctx), void *ctx, int64_t deadline)
{
  for (;;)
    {
      if (done (ctx))
        return 1;
      int left = bx_deadline_left (deadline);
      if (left == 0)
        return 0;
      int r = sd_event_run (b->loop, left < 0 ? UINT64_MAX : (uint64_t)left * 1000);
      if (r < 0)
        return r;
    }
}

int
bx_brokerd_new (struct bx_config *config, struct bx_runtimes *runtimes, int listen_fd,
                const char *wake_path, struct brokerd **out, bx_error *err)
{
  struct brokerd *b = bx_xzalloc (sizeof *b);
  b->config = b->config_owned = config;
  b->runtimes = runtimes;
  b->listen_fd = listen_fd;
  b->socket_activated = listen_fd >= 0;
  snprintf (b->wake_path, sizeof b->wake_path, "%s", wake_path ? wake_path : "");
  /* Placeholders a brokerd killed in the middle of a call left in granted folders. */
  bx_placeholders_start (config->home);
  b->metrics = bx_metrics_new ();
  b->wake_fd = -1;
  if (make_loop (b, err) < 0 || bx_audit_open (config->audit, &b->audit, err) < 0
      || (config->metrics_socket != NULL
          && bx_metrics_serve (b->metrics, b->loop, config->metrics_socket, err) < 0))
    goto fail;
  if (!b->socket_activated)
    {
      if (bx_server_listen (config, &b->listen_fd, err) < 0)
        goto fail;
      b->socket_ours = true;
    }
  /* One canceller for the server's calls and the approved ones: brokerd stopping past its
   * grace period cancels them all the same way. */
  bx_error cerr = NULL;
  if (bx_canceller_start (b->loop, &b->canceller, &cerr) < 0)
    {
      bx_log (LOG_WARNING, NULL, "%s: a client that leaves does not cancel its call",
              bx_error_msg (cerr));
      bx_error_free (&cerr);
    }
  b->fair = bx_fair_new (config->max_running, config->max_running_per_uid);
  if (start_approvals (b, err) < 0)
    goto fail;
  /* The live config owns CONFIG from now on; the first stays held for as long as brokerd
   * runs, since its start-only keys are read throughout. */
  b->live = bx_live_config_new (b->config_owned);
  b->config_owned = NULL;
  bx_live_config_protect (b->live, runtimes);
  const struct bx_config *first = NULL;
  b->first = bx_live_config_get (b->live, &first);
  b->config = first;
  b->mcp_lists = bx_mcp_lists_new ();
  bx_mcp_lists_refresh (b->mcp_lists, b);
  *out = b;
  return 0;

fail:
  bx_brokerd_free (b);
  return -1;
}

unsigned
bx_brokerd_stop (struct brokerd *b, int64_t grace_end)
{
  if (b->stopped)
    return 0;
  b->stopped = true;
  /* Every call still waiting gets its final answer; approved ones running get the grace. */
  bx_admin_stop (b->admin);
  return bx_approvals_stop (b->approvals, grace_end);
}

void
bx_brokerd_free (struct brokerd *b)
{
  if (b == NULL)
    return;
  bx_brokerd_stop (b, bx_deadline_in (0));
  /* Before the canceller: a listing still running is cancelled through it. */
  bx_mcp_lists_free (b->mcp_lists, b);
  bx_admin_free (b->admin);
  bx_approvals_free (b->approvals);
  bx_canceller_stop (b->canceller);
  bx_fair_free (b->fair);
  bx_placeholders_stop ();
  if (b->socket_ours)
    unlink (b->config->socket);
  if (b->listen_fd >= 0)
    close (b->listen_fd);
  /* The metrics' sources go before their loop. */
  bx_metrics_free (b->metrics);
  sd_event_source_disable_unref (b->wake_source);
  if (b->wake_fd >= 0)
    close (b->wake_fd);
  sd_event_unref (b->loop);
  bx_runtimes_free (b->runtimes);
  bx_audit_close (b->audit);
  if (b->live != NULL)
    {
      bx_live_config_put (b->live, b->first);
      bx_live_config_free (b->live);
    }
  bx_config_free (b->config_owned);
  free (b);
}

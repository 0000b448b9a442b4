/* SPDX-License-Identifier: Apache-2.0 */
/* One running brokerd: everything it owns, made by one constructor and freed by one
 * destructor.  The server, every call (call.h) and the approvals reach what they need
 * through it.
 *
 * Its life: bx_brokerd_new (the socket listens, the audit log is open, the metrics and the
 * admin socket serve), bx_server_run (server.h: calls until SIGTERM or SIGINT), bx_brokerd_stop
 * (the owners' socket closes, approved calls get the grace period), bx_brokerd_free.  While a
 * call still runs after the grace period, nothing may be freed: the process ends first. */
#ifndef BX_BROKER_DAEMON_H
#define BX_BROKER_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "bx/cleanup.h"
#include "bx/error.h"

#include "admin.h"
#include "approvals.h"
#include "audit.h"
#include "cancel.h"
#include "config.h"
#include "fair.h"
#include "mcp_lists.h"
#include "metrics.h"
#include "module_loader.h"
#include "runtimes.h"
#include "notify.h"
#include "reload.h"

struct brokerd
{
  /* The first config: its start-only keys (socket, limits) hold for the whole life.  The
   * live config owns it and serves the grants, which a reload may replace. */
  const struct bx_config *config;
  struct bx_live_config *live;
  struct bx_config_hold *first;
  struct bx_runtimes *runtimes; /* the default runtime first (runtimes.h) */
  struct bx_audit *audit;
  struct bx_metrics *metrics;
  /* Watches the clients of running calls, the server's and the approved ones alike; NULL
   * when it could not start (calls then run uncancellable, logged). */
  struct bx_canceller *canceller;
  /* Shares the module's runs between callers (max_running, max_running_per_uid). */
  struct bx_fair *fair;
  /* The tools the owner's MCP servers listed (mcp_lists.h). */
  struct bx_mcp_lists *mcp_lists;
  /* The calls waiting for approval and the owners' socket; NULL when no grant asks. */
  struct bx_approvals *approvals;
  struct bx_admin *admin;
  /* The listening socket, and the loop the main thread runs: signals, the status, the
   * metrics and the admin socket are its sources.  Only the main thread touches the loop;
   * another thread hands it work through a locked queue of its own and bx_brokerd_wake. */
  int listen_fd;
  sd_event *loop;
  int wake_fd; /* an eventfd: a source of the loop that any thread may make readable */
  sd_event_source *wake_source;
  int signo;             /* SIGTERM or SIGINT once one came: brokerd stops */
  bool socket_activated; /* the listening socket is systemd's: never shut down or removed */
  bool socket_ours;      /* the socket file is ours to remove when brokerd stops */
  /* When socket activated, where brokerd connects to wake its own workers at stop: a path
   * that reaches the socket whatever became of the config's (activation.h). */
  char wake_path[32];
  bool stopped;
  struct bx_config *config_owned; /* until the live config takes it */
};

/* Makes a brokerd of CONFIG and RUNTIMES (created), both taken whatever happens: the
 * placeholders a killed brokerd left are cleared, the audit log opened, the metrics socket,
 * the listening socket (LISTEN_FD when systemd passed one, -1 otherwise; then WAKE_PATH is
 * where to reach it) and, when a grant asks for approval, the admin socket serve.  SIGTERM,
 * SIGINT and SIGHUP must be blocked in every thread already.  -1 and ERR when a part could
 * not be made; then what was made is gone again. */
int bx_brokerd_new (struct bx_config *config, struct bx_runtimes *runtimes, int listen_fd,
                    const char *wake_path, struct brokerd **out, bx_error *err);
/* After the server stopped: closes the owners' socket, and waits until GRACE_END for
 * approved calls still running (bx_approvals_stop).  Returns how many are left. */
unsigned bx_brokerd_stop (struct brokerd *brokerd, int64_t grace_end);
/* Frees BROKERD and all it owns; nothing when NULL. */
void bx_brokerd_free (struct brokerd *brokerd);

static inline void
bx_brokerd_freep (struct brokerd **p)
{
  bx_brokerd_free (*p);
}
#define cleanup_brokerd __attribute__ ((cleanup (bx_brokerd_freep)))

/* Wakes brokerd's loop from any thread, so that the main thread looks again at what
 * bx_brokerd_run_until waits for.  Never fails. */
void bx_brokerd_wake (struct brokerd *brokerd);
/* Runs brokerd's loop on the main thread until DONE (CTX) is true, or DEADLINE
 * (bx/deadline.h) passed.  DONE is asked before each turn of the loop; whoever changes what
 * it reads from another thread calls bx_brokerd_wake.  1 when DONE, 0 past DEADLINE, or a
 * negative errno when the loop failed. */
int bx_brokerd_run_until (struct brokerd *brokerd, bool (*done) (void *ctx), void *ctx,
                          int64_t deadline);

/* SIGHUP (`systemctl reload`): opens the audit log again (after a rotation) and re-reads the
 * grants; whatever fails is logged and the running state stays. */
void bx_brokerd_reload (struct brokerd *brokerd);

#endif

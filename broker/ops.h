/* SPDX-License-Identifier: Apache-2.0 */
/* What brokerd's operations add to serving calls: the live config (reload), the metrics,
 * how it was started (socket activation) and where its log lines go (the journal or plain
 * standard error).  brokerd.c makes one; the server reaches it through its few hooks. */
#ifndef BX_BROKER_OPS_H
#define BX_BROKER_OPS_H

#include <stdbool.h>

#include "audit.h"
#include "cancel.h"
#include "metrics.h"
#include "notify.h"
#include "reload.h"

struct bx_ops
{
  struct bx_live_config *live;
  struct bx_metrics *metrics;
  bool socket_activated; /* the listening socket is systemd's: never shut down or removed */
  bool journal;          /* standard error is the journal */
  /* Watches the clients of running calls, the server's and the approved ones alike; NULL
   * when it could not start (calls then run uncancellable, logged). */
  struct bx_canceller *canceller;
};

/* The operations of a brokerd starting: METRICS (borrowed), and the canceller started (when it
 * cannot start, that is logged and calls run uncancellable).  The live config is set later. */
struct bx_ops *bx_ops_new (struct bx_metrics *metrics, bool socket_activated, bool journal);
/* Stops the canceller and frees OPS, not its metrics or live config: only when no call can
 * use them any more. */
void bx_ops_free (struct bx_ops *ops);

/* SIGHUP (`systemctl reload`): opens the audit log again (after a rotation) and re-reads the
 * grants; whatever fails is logged and the running state stays. */
void bx_ops_reload (struct bx_ops *ops, struct bx_audit *audit);

#endif

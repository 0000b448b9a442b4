/* SPDX-License-Identifier: Apache-2.0 */
/* What brokerd's operations add to serving calls: the live config (reload), the metrics,
 * how it was started (socket activation) and where its log lines go (the journal or plain
 * standard error).  brokerd.c makes one; the server reaches it through its few hooks. */
#ifndef BX_BROKER_OPS_H
#define BX_BROKER_OPS_H

#include <stdbool.h>

#include "audit.h"
#include "metrics.h"
#include "notify.h"
#include "reload.h"

struct bx_ops
{
  struct bx_live_config *live;
  struct bx_metrics *metrics;
  bool socket_activated; /* the listening socket is systemd's: never shut down or removed */
  bool journal;          /* standard error is the journal */
};

/* SIGHUP (`systemctl reload`): opens the audit log again (after a rotation) and re-reads the
 * grants; whatever fails is logged and the running state stays. */
void bx_ops_reload (struct bx_ops *ops, struct bx_audit *audit);

#endif

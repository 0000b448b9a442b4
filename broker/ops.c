/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd's operations: see ops.h. */
#include <stdlib.h>

#include "bx/cleanup.h"

#include "ops.h"

struct bx_ops *
bx_ops_new (struct bx_metrics *metrics, bool socket_activated, bool journal)
{
  struct bx_ops *ops = bx_xzalloc (sizeof *ops);
  ops->metrics = metrics;
  ops->socket_activated = socket_activated;
  ops->journal = journal;
  /* One canceller for the server's calls and the approved ones: brokerd stopping past its
   * grace period cancels them all the same way. */
  cleanup_error bx_error err = NULL;
  if (bx_canceller_start (journal, &ops->canceller, &err) < 0)
    bx_log (journal, LOG_WARNING, NULL, "%s: a client that leaves does not cancel its call",
            bx_error_msg (err));
  return ops;
}

void
bx_ops_free (struct bx_ops *ops)
{
  if (ops == NULL)
    return;
  bx_canceller_stop (ops->canceller);
  free (ops);
}

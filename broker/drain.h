/* SPDX-License-Identifier: Apache-2.0 */
/* Refused connections, drained off the workers.  A connection refused with "brokerd is
 * busy" is kept open a moment (its request read and dropped) so that the client's write
 * does not fail with EPIPE before it reads the refusal.  A worker that waited for that
 * itself would stop accepting for as long as the client chose to stay silent: one thread
 * here waits for all of them instead, and a refusal costs a worker no time. */
#ifndef BX_BROKER_DRAIN_H
#define BX_BROKER_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "bx/error.h"

struct bx_drainer;

/* Starts the thread.  JOURNAL: where its log lines go (notify.h, bx_log). */
int bx_drainer_start (struct bx_drainer **out, bx_error *err);
/* Takes FD, whose refusal is written and whose sending side is shut down: it is read until
 * the client closes, MAX bytes came, or MS passed, then closed.  Past the number of
 * connections it can hold, FD is closed at once. */
void bx_drainer_add (struct bx_drainer *d, int fd, int64_t ms, size_t max);
/* Stops the thread and closes every connection it held; nothing may add any more. */
void bx_drainer_stop (struct bx_drainer *d);

#endif

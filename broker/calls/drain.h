/* SPDX-License-Identifier: Apache-2.0 */
/* Refused connections, drained off the workers.  A connection refused with "brokerd is
 * busy" is kept open a moment (its request read and dropped) so that the client's write
 * does not fail with EPIPE before it reads the refusal.  A worker that waited for that
 * itself would stop accepting for as long as the client chose to stay silent: brokerd's loop
 * waits for all of them instead (each an io source and a timer), and a refusal costs a
 * worker no time.  Workers hand connections over through a locked list and an eventfd that
 * is a source of the loop; only the loop's thread calls sd_event. */
#ifndef BX_BROKER_DRAIN_H
#define BX_BROKER_DRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "bx/error.h"

struct bx_drainer;

/* Makes a drainer whose connections are sources of LOOP. */
int bx_drainer_start (sd_event *loop, struct bx_drainer **out, bx_error *err);
/* From any thread: takes FD, whose refusal is written and whose sending side is shut down: it is
 * read until the client closes, MAX bytes came, or MS passed, then closed.  Past the number of
 * connections it can hold, FD is closed at once. */
void bx_drainer_add (struct bx_drainer *d, int fd, int64_t ms, size_t max);
/* On the loop's thread: closes every connection it held and frees D; nothing may add any
 * more. */
void bx_drainer_stop (struct bx_drainer *d);

#endif

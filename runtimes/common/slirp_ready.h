/* SPDX-License-Identifier: Apache-2.0 */
/* Waiting for slirp4netns to bring the egress proxy's interface up, which bwrap.so and
 * gvisor.so do the same way: slirp4netns writes one byte on its --ready-fd once tap0 is
 * configured, and closes it by exiting when it cannot. */
#ifndef BX_RUNTIME_SLIRP_READY_H
#define BX_RUNTIME_SLIRP_READY_H

#include <stdbool.h>
#include <stdint.h>

#include <boxmaker/runtime.h>

/* true once slirp4netns wrote on READY (the read end of its ready pipe, non-blocking, the
 * write end already closed here); false when it closed the pipe, DEADLINE passed or the
 * call was cancelled.  Looks every TICK_MS: the cancellation has no descriptor to wait on.
 * READY stays open. */
bool bx_slirp_wait_ready (const struct bx_host *host, const bx_run_spec *spec, int ready,
                          int64_t deadline, long tick_ms);

#endif

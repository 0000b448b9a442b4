/* SPDX-License-Identifier: Apache-2.0 */
/* Fair admission to the runtime module: runs are shared between callers (peer uids, the
 * kernel's word), so that one caller with many slow calls cannot hold every run while
 * another caller's quick call waits behind them.
 *
 * At most MAX calls run in the module at once, and at most PER_UID of them for one uid (a
 * uid the kernel could not tell counts as one uid of its own).  A call past either waits;
 * when a run ends, it goes to the waiting call of the uid that runs the fewest calls, the
 * one that has waited longest among equals.  The module's own slots (bwrap.so's `slots`)
 * then never make a call wait: brokerd's order is the one that holds.
 *
 * Thread-safe. */
#ifndef BX_BROKER_FAIR_H
#define BX_BROKER_FAIR_H

#include <stdbool.h>
#include <stdint.h>

struct bx_fair;

struct bx_fair *bx_fair_new (unsigned max, unsigned per_uid);
/* No call may be running or waiting. */
void bx_fair_free (struct bx_fair *fair);

/* Takes a run for UID when one is free within its share, without waiting: true when taken
 * (then bx_fair_leave when its run is over).  A NULL FAIR admits every call. */
bool bx_fair_try_enter (struct bx_fair *fair, int64_t uid);
/* Waits until a call of UID may run.  True when it may (then bx_fair_leave when its run is
 * over); false, taking nothing, when CANCEL_FD (-1: none) became readable first.  A NULL
 * FAIR admits every call at once. */
bool bx_fair_enter (struct bx_fair *fair, int64_t uid, int cancel_fd);
void bx_fair_leave (struct bx_fair *fair, int64_t uid);

/* Calls running and waiting now (for tests). */
void bx_fair_counts (struct bx_fair *fair, unsigned *running, unsigned *waiting);

#endif

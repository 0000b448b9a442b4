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
 * The server shares its connections out the same way (MAX: max_connections, PER_UID:
 * max_connections_per_uid), with bx_fair_queue: there the wait is bounded in time and in
 * the number waiting, and ends when the client hangs up.
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

/* How a wait in bx_fair_queue ended. */
enum bx_fair_wait
{
  BX_FAIR_ADMITTED,  /* UID may go on: bx_fair_leave when it is done */
  BX_FAIR_FULL,      /* the queue was full: MAX_WAITING calls, or PER_UID_WAITING of UID's */
  BX_FAIR_TIMED_OUT, /* DEADLINE passed first */
  BX_FAIR_HUNG_UP,   /* the peer of HANGUP_FD closed its end first */
  BX_FAIR_CLOSED,    /* bx_fair_close was called */
};

/* Like bx_fair_enter, for a connection: takes a place for UID at once when one is free
 * within its share; else waits in the same order for one, but only while fewer than
 * MAX_WAITING calls wait (and fewer than PER_UID_WAITING of UID's), until DEADLINE (ms on
 * CLOCK_MONOTONIC, bx/deadline.h), and while the peer of the connected socket HANGUP_FD has
 * not closed its end (its requests being readable does not end the wait).  Only
 * BX_FAIR_ADMITTED takes a place. */
enum bx_fair_wait bx_fair_queue (struct bx_fair *fair, int64_t uid, int hangup_fd, int64_t deadline,
                                 unsigned max_waiting, unsigned per_uid_waiting);
/* Ends every wait with BX_FAIR_CLOSED, and every later one at once; places taken are kept
 * until left. */
void bx_fair_close (struct bx_fair *fair);

/* Calls running and waiting now (for tests). */
void bx_fair_counts (struct bx_fair *fair, unsigned *running, unsigned *waiting);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* What the sources of brokerd's loop (daemon.h) share. */
#ifndef BX_BROKER_LOOP_H
#define BX_BROKER_LOOP_H

/* The accuracy asked of the loop's timers, in microseconds.  sd-event's default (250 ms,
 * for timers that may be coalesced) would make a 10 ms wait a quarter of a second; brokerd
 * has only a handful of timers and wants them on time. */
#define BX_LOOP_ACCURACY_US 1000

#endif

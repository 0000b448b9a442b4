/* SPDX-License-Identifier: Apache-2.0 */
/* One deadline for a whole exchange, not a timeout per read: a peer that sends one byte now and
 * then must not hold a connection for ever (docs/protocol.md, "Reading under one deadline",
 * explains why).  Deadlines are absolute times on CLOCK_MONOTONIC in milliseconds. */
#ifndef BX_DEADLINE_H
#define BX_DEADLINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "bx/error.h"

#define BX_NO_DEADLINE INT64_MAX

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t bx_now_ms (void);
/* Nanoseconds on CLOCK_MONOTONIC, for measuring. */
int64_t bx_now_ns (void);
/* now + ms, saturating at BX_NO_DEADLINE; a negative ms gives now. */
int64_t bx_deadline_in (int64_t ms);
/* What is left of DEADLINE in ms for poll(): 0 when passed, -1 for BX_NO_DEADLINE, capped
 * at INT32_MAX. */
int bx_deadline_left (int64_t deadline);
/* DEADLINE as the absolute CLOCK_MONOTONIC time pthread_cond_timedwait wants (with a
 * condition variable set to that clock). */
struct timespec bx_deadline_timespec (int64_t deadline);

/* Reads exactly LEN bytes from FD (blocking or not) before DEADLINE.  Returns LEN, or the
 * number of bytes read before the peer closed (less than LEN), or -1 with *err set: code
 * ETIMEDOUT when the deadline passed, another errno on a read error. */
ssize_t bx_read_full (int fd, void *buf, size_t len, int64_t deadline, bx_error *err);
/* Writes all LEN bytes to FD before DEADLINE; 0, or -1 with *err (ETIMEDOUT, EPIPE, ...).
 * Uses send(MSG_NOSIGNAL) on sockets so a closed peer is an error and not SIGPIPE. */
int bx_write_full (int fd, const void *buf, size_t len, int64_t deadline, bx_error *err);

#endif

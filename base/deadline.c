/* SPDX-License-Identifier: Apache-2.0 */
/* One deadline for a whole exchange: see bx/deadline.h.  Every read and write checks what is
 * left of the deadline; a socket is read and written without blocking and polled (for what
 * is left) only when it is empty or full, anything else is polled first.  So a peer that
 * trickles bytes cannot stretch an exchange past the deadline, whatever the blocking mode
 * of the descriptor. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bx/deadline.h"

int64_t
bx_now_ms (void)
{
  struct timespec ts;
  /* CLOCK_MONOTONIC cannot fail with a valid clock id and pointer. */
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct timespec
bx_deadline_timespec (int64_t deadline)
{
  return (struct timespec){ .tv_sec = (time_t)(deadline / 1000),
                            .tv_nsec = (long)(deadline % 1000) * 1000000 };
}

int64_t
bx_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
bx_deadline_in (int64_t ms)
{
  int64_t now = bx_now_ms ();
  if (ms <= 0)
    return now;
  if (ms >= BX_NO_DEADLINE - now)
    return BX_NO_DEADLINE;
  return now + ms;
}

int
bx_deadline_left (int64_t deadline)
{
  if (deadline == BX_NO_DEADLINE)
    return -1;
  int64_t now = bx_now_ms ();
  if (deadline <= now)
    return 0;
  /* deadline > now, so the difference cannot overflow unless deadline is huge and now is
   * negative, which CLOCK_MONOTONIC never is. */
  int64_t left = deadline - now;
  return left > INT32_MAX ? INT32_MAX : (int)left;
}

/* Waits until FD is ready for EVENTS or the deadline passes: 0 when ready (or in error: the
 * next read or write reports it), -1 with *err otherwise. */
static int
wait_for (int fd, short events, int64_t deadline, bx_error *err)
{
  for (;;)
    {
      int left = bx_deadline_left (deadline);
      if (left == 0)
        return bx_error_setc (err, ETIMEDOUT, "the deadline passed");
      struct pollfd pfd = { .fd = fd, .events = events };
      int r = poll (&pfd, 1, left);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return bx_error_set (err, errno, "poll");
        }
      if (r > 0)
        return 0;
      /* r == 0: poll's own timeout; go round so the deadline check decides. */
    }
}

ssize_t
bx_read_full (int fd, void *buf, size_t len, int64_t deadline, bx_error *err)
{
  char *p = buf;
  size_t got = 0;
  bool is_socket = true;
  /* poll() skips a negative descriptor and would wait out the deadline. */
  if (fd < 0 && len > 0)
    return bx_error_set (err, EBADF, "read");
  while (got < len)
    {
      ssize_t n;
      if (bx_deadline_left (deadline) == 0)
        return bx_error_setc (err, ETIMEDOUT, "the deadline passed");
      /* On a socket, try first and poll only when nothing is there: most frames arrive
       * whole, and this saves a poll per read.  MSG_DONTWAIT keeps a blocking socket from
       * outlasting the deadline. */
      if (is_socket)
        {
          n = recv (fd, p + got, len - got, MSG_DONTWAIT);
          if (n < 0 && errno == ENOTSOCK)
            {
              is_socket = false;
              continue;
            }
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            {
              if (wait_for (fd, POLLIN, deadline, err) < 0)
                return -1;
              continue;
            }
        }
      else
        {
          if (wait_for (fd, POLLIN, deadline, err) < 0)
            return -1;
          n = read (fd, p + got, len - got);
        }
      if (n < 0)
        {
          if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
            continue;
          return bx_error_set (err, errno, "read");
        }
      if (n == 0)
        break;
      got += (size_t)n;
    }
  return (ssize_t)got;
}

int
bx_write_full (int fd, const void *buf, size_t len, int64_t deadline, bx_error *err)
{
  const char *p = buf;
  size_t done = 0;
  bool is_socket = true;
  size_t chunk_max = PIPE_BUF;
  if (fd < 0 && len > 0)
    return bx_error_set (err, EBADF, "write");
  while (done < len)
    {
      ssize_t n;
      if (bx_deadline_left (deadline) == 0)
        return bx_error_setc (err, ETIMEDOUT, "the deadline passed");
      if (is_socket)
        {
          /* Try first, poll only when the socket is full (a frame usually fits at once).
           * MSG_DONTWAIT: a blocking send of the rest could outlast the deadline.
           * MSG_NOSIGNAL: a closed peer is EPIPE, not a signal that kills the daemon. */
          n = send (fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
          if (n < 0 && errno == ENOTSOCK)
            {
              is_socket = false;
              struct stat st;
              chunk_max = fstat (fd, &st) == 0 && S_ISREG (st.st_mode) ? SIZE_MAX : PIPE_BUF;
              continue;
            }
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            {
              if (wait_for (fd, POLLOUT, deadline, err) < 0)
                return -1;
              continue;
            }
        }
      else
        {
          if (wait_for (fd, POLLOUT, deadline, err) < 0)
            return -1;
          /* A pipe that poll calls writable takes at least PIPE_BUF bytes without blocking;
           * a regular file never blocks for long, so it takes everything at once. */
          size_t chunk = len - done < chunk_max ? len - done : chunk_max;
          n = write (fd, p + done, chunk);
        }
      if (n < 0)
        {
          if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
            continue;
          return bx_error_set (err, errno, "write");
        }
      done += (size_t)n;
    }
  return 0;
}

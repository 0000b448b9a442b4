/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers the egress suites share: a SOCKS5 client written out byte by byte (so a test can
 * send exactly the malformed thing it means), and reads bounded by time, so a proxy that
 * misbehaves fails a test instead of hanging it. */
#ifndef BX_TESTS_EGRESS_UTIL_H
#define BX_TESTS_EGRESS_UTIL_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static inline int64_t
test_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads up to LEN bytes, waiting at most TIMEOUT_MS in all; stops at the end of the stream
 * (or a reset, which is how a close with unread bytes looks).  Returns the count read, and
 * sets *CLOSED when the end was seen. */
static inline size_t
test_read (int fd, void *buf, size_t len, int timeout_ms, bool *closed)
{
  int64_t end = test_now_ms () + timeout_ms;
  size_t got = 0;
  *closed = false;
  while (got < len)
    {
      int left = (int)(end - test_now_ms ());
      if (left < 0)
        left = 0;
      struct pollfd p = { .fd = fd, .events = POLLIN };
      int r = poll (&p, 1, left);
      if (r == 0)
        break;
      if (r < 0)
        continue;
      ssize_t n = read (fd, (char *)buf + got, len - got);
      if (n == 0 || (n < 0 && errno == ECONNRESET))
        {
          *closed = true;
          break;
        }
      if (n < 0)
        continue;
      got += n;
    }
  return got;
}

/* True when FD reaches its end within TIMEOUT_MS with no byte before it. */
static inline bool
test_closed_without_bytes (int fd, int timeout_ms)
{
  char c;
  bool closed;
  size_t n = test_read (fd, &c, 1, timeout_ms, &closed);
  if (n == 1)
    return false;
  if (closed)
    return true;
  n = test_read (fd, &c, 1, 0, &closed);
  return n == 0 && closed;
}

static inline bool
test_send (int fd, const void *buf, size_t len)
{
  size_t off = 0;
  while (off < len)
    {
      ssize_t n = send (fd, (const char *)buf + off, len - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      off += n;
    }
  return true;
}

/* A CONNECT request for NAME:PORT with address type 3; returns its length in OUT. */
static inline size_t
test_request (uint8_t *out, const char *name, size_t name_len, uint16_t port)
{
  size_t n = 0;
  out[n++] = 5;
  out[n++] = 1;
  out[n++] = 0;
  out[n++] = 3;
  out[n++] = (uint8_t)name_len;
  memcpy (out + n, name, name_len);
  n += name_len;
  out[n++] = port >> 8;
  out[n++] = port & 0xff;
  return n;
}

#endif

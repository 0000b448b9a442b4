/* SPDX-License-Identifier: Apache-2.0 */
/* Dial: how the egress proxy turns a granted name into a connected socket.  A table of
 * functions with a context pointer, so tests need no network: the system's (getaddrinfo and
 * a non-blocking connect) is the only one the production program links; a fake (names from
 * a table, every connection to a local test server) exists only in test builds. */
#ifndef BX_TOOLKIT_DIAL_H
#define BX_TOOLKIT_DIAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bx/error.h"

/* More addresses than any real name has; the rest of a longer answer is dropped. */
#define BX_DIAL_MAX_ADDRS 32

struct bx_dial_addr
{
  struct sockaddr_storage ss;
  socklen_t len;
};

struct bx_dial_addrs
{
  size_t n;
  struct bx_dial_addr a[BX_DIAL_MAX_ADDRS];
};

struct bx_dial
{
  void *ctx;
  /* Resolves HOST (a valid host name) for TCP PORT into OUT (every address the resolver
   * gives, public or not: the proxy chooses).  Returns 0, or -1 with *err set.  It may block;
   * the proxy runs it on a thread of its own and stops waiting at DEADLINE (bx_now_ms time),
   * so a resolver that hangs never holds a connection past the handshake's deadline.  The
   * proxy may have gone by the time it returns: it must not keep HOST or OUT. */
  int (*resolve) (void *ctx, const char *host, uint16_t port, int64_t deadline,
                  struct bx_dial_addrs *out, bx_error *err);
  /* Connects to ADDR within TIMEOUT_MS.  Returns a connected, blocking stream socket, or -1
   * with *err set. */
  int (*connect) (void *ctx, const struct sockaddr *addr, socklen_t len, int timeout_ms,
                  bx_error *err);
};

/* The system's Dial: getaddrinfo, then a non-blocking connect bounded by poll. */
const struct bx_dial *bx_dial_system (void);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* The system's Dial: getaddrinfo, and a non-blocking connect bounded by poll.  getaddrinfo
 * has no timeout of its own; the proxy runs resolve on a thread it stops waiting for at the
 * handshake's deadline (egress.c), so a hanging resolver holds no connection. */
#include "dial.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

static int
system_resolve (void *ctx, const char *host, uint16_t port, int64_t deadline,
                struct bx_dial_addrs *out, bx_error *err)
{
  char service[8];
  snprintf (service, sizeof service, "%u", (unsigned)port);
  /* AI_ADDRCONFIG: no IPv6 answers on a host without IPv6, where they could only fail. */
  struct addrinfo hints = { .ai_family = AF_UNSPEC,
                            .ai_socktype = SOCK_STREAM,
                            .ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV };
  struct addrinfo *res = NULL;
  int r = getaddrinfo (host, service, &hints, &res);
  if (r != 0)
    return bx_error_setc (err, r == EAI_SYSTEM ? errno : EHOSTUNREACH, "cannot resolve %s: %s",
                          host, gai_strerror (r));
  out->n = 0;
  for (struct addrinfo *ai = res; ai != NULL && out->n < BX_DIAL_MAX_ADDRS; ai = ai->ai_next)
    {
      if (ai->ai_addrlen > sizeof out->a[0].ss)
        continue;
      memcpy (&out->a[out->n].ss, ai->ai_addr, ai->ai_addrlen);
      out->a[out->n].len = ai->ai_addrlen;
      out->n++;
    }
  freeaddrinfo (res);
  return 0;
}

static int
system_connect (void *ctx, const struct sockaddr *addr, socklen_t len, int timeout_ms,
                bx_error *err)
{
  cleanup_close int fd = socket (addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return bx_error_set (err, errno, "socket");
  if (connect (fd, addr, len) < 0)
    {
      if (errno != EINPROGRESS)
        return bx_error_set (err, errno, "connect");
      int64_t deadline = bx_deadline_in (timeout_ms);
      for (;;)
        {
          struct pollfd p = { .fd = fd, .events = POLLOUT };
          int n = poll (&p, 1, bx_deadline_left (deadline));
          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0)
            return bx_error_set (err, errno, "poll");
          if (n == 0)
            return bx_error_set (err, ETIMEDOUT, "connect");
          break;
        }
      int so_error = 0;
      socklen_t so_len = sizeof so_error;
      if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &so_error, &so_len) < 0)
        return bx_error_set (err, errno, "getsockopt");
      if (so_error != 0)
        return bx_error_set (err, so_error, "connect");
    }
  /* The copy uses blocking calls; TLS records are small and latency-bound, so no Nagle. */
  int flags = fcntl (fd, F_GETFL);
  if (flags < 0 || fcntl (fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
    return bx_error_set (err, errno, "fcntl");
  int one = 1;
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return steal_fd (&fd);
}

static const struct bx_dial system_dial = {
  .ctx = NULL,
  .resolve = system_resolve,
  .connect = system_connect,
};

const struct bx_dial *
bx_dial_system (void)
{
  return &system_dial;
}

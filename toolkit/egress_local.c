/* SPDX-License-Identifier: Apache-2.0 */
/* The shell's local forwarder: see egress_local.h.  Everything read here comes from the
 * sandboxed command, which may be hostile to the forwarder too: the head is read whole
 * within a size and a deadline, a host must pass bx_valid_host before it is sent on, and
 * nothing is allocated by a number the client gave. */
#include "egress_local.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/fd.h"
#include "bx/hosts.h"
#include "egress.h"

struct server
{
  char *proxy_socket;
  int listener;
  atomic_int active;
};

struct conn
{
  struct server *server;
  int fd;
};

static int
connect_proxy (const char *path)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  size_t len = strlen (path);
  if (len >= sizeof sun.sun_path)
    return -1;
  memcpy (sun.sun_path, path, len);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (connect (fd, (struct sockaddr *)&sun, sizeof sun) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* An answer to an HTTP client that ends the connection; REASON is also the body. */
static void
answer (int client, int code, const char *reason)
{
  cleanup_error bx_error err = NULL;
  cleanup_free char *text
      = bx_xasprintf ("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n%s\n",
                      code, reason, strlen (reason) + 1, reason);
  bx_write_full (client, text, strlen (text), bx_deadline_in (BX_EGRESS_LOCAL_HEAD_MS), &err);
}

/* SOCKS5 to the egress proxy for HOST:PORT (address type 3).  The proxy's reply code
 * (0 for success), or -1 when it closed or did not answer in time. */
static int
socks_connect (int proxy, const char *host, unsigned port)
{
  cleanup_error bx_error err = NULL;
  const int64_t deadline = bx_deadline_in (BX_EGRESS_CONNECT_MS + BX_EGRESS_HANDSHAKE_MS);
  const uint8_t hello[3] = { 5, 1, 0 };
  uint8_t got[10];
  if (bx_write_full (proxy, hello, sizeof hello, deadline, &err) < 0
      || bx_read_full (proxy, got, 2, deadline, &err) != 2 || got[0] != 5 || got[1] != 0)
    return -1;
  size_t len = strlen (host);
  uint8_t req[4 + 1 + BX_HOST_MAX + 2];
  size_t n = 0;
  req[n++] = 5;
  req[n++] = 1;
  req[n++] = 0;
  req[n++] = 3;
  req[n++] = (uint8_t)len;
  memcpy (req + n, host, len);
  n += len;
  req[n++] = (uint8_t)(port >> 8);
  req[n++] = (uint8_t)(port & 0xff);
  if (bx_write_full (proxy, req, n, deadline, &err) < 0
      || bx_read_full (proxy, got, 10, deadline, &err) != 10 || got[0] != 5)
    return -1;
  return got[1];
}

/* Opens HOST:PORT through the proxy; the proxy socket, or -1 after answering CLIENT why
 * not. */
static int
open_through (const char *proxy_socket, int client, const char *host, unsigned port)
{
  char why[BX_HOST_MAX + 160];
  if (!bx_valid_host (host))
    {
      snprintf (why, sizeof why,
                "boxmaker egress: \"%.*s\" is not a host name (an address is never granted)",
                BX_HOST_MAX, host);
      answer (client, 403, why);
      return -1;
    }
  cleanup_close int proxy = connect_proxy (proxy_socket);
  if (proxy < 0)
    {
      answer (client, 502, "boxmaker egress: the egress proxy is not there");
      return -1;
    }
  int code = socks_connect (proxy, host, port);
  switch (code)
    {
    case BX_SOCKS_SUCCEEDED:
      return steal_fd (&proxy);
    case BX_SOCKS_NOT_ALLOWED:
      snprintf (why, sizeof why, "boxmaker egress: %s:%u is not a granted host and port", host,
                port);
      answer (client, 403, why);
      break;
    case BX_SOCKS_NETWORK_UNREACHABLE:
      snprintf (why, sizeof why,
                "boxmaker egress: %s has no address this sandbox may reach (public, or in "
                "allow_private)",
                host);
      answer (client, 502, why);
      break;
    case BX_SOCKS_HOST_UNREACHABLE:
      snprintf (why, sizeof why, "boxmaker egress: could not resolve %s", host);
      answer (client, 502, why);
      break;
    case BX_SOCKS_CONNECTION_REFUSED:
      snprintf (why, sizeof why, "boxmaker egress: %s:%u refused the connection", host, port);
      answer (client, 502, why);
      break;
    case BX_SOCKS_TTL_EXPIRED:
      snprintf (why, sizeof why, "boxmaker egress: %s:%u did not answer in time", host, port);
      answer (client, 504, why);
      break;
    case BX_SOCKS_GENERAL_FAILURE:
      answer (client, 502, "boxmaker egress: too many connections in one call");
      break;
    default:
      answer (client, 502, "boxmaker egress: the egress proxy gave no answer");
      break;
    }
  return -1;
}

/* Splits "host:port" (no brackets: an address is refused anyway).  False when the port is
 * missing or not one. */
static bool
split_authority (char *authority, unsigned default_port, const char **host, unsigned *port)
{
  char *colon = strrchr (authority, ':');
  *host = authority;
  if (colon == NULL)
    {
      *port = default_port;
      return default_port != 0;
    }
  *colon = '\0';
  *port = bx_port_parse (colon + 1, strlen (colon + 1));
  return *port != 0;
}

/* Reads the request head (up to the blank line) into BUF, which holds HAVE bytes already;
 * the head's length, with *TOTAL all the bytes read, or 0 when it did not come whole, within
 * CAP bytes and in time. */
static size_t
read_head (int client, char *buf, size_t cap, size_t have, size_t *total)
{
  const int64_t deadline = bx_deadline_in (BX_EGRESS_LOCAL_HEAD_MS);
  size_t len = have;
  for (;;)
    {
      buf[len] = '\0';
      char *end = strstr (buf, "\r\n\r\n");
      if (end != NULL)
        {
          *total = len;
          return (size_t)(end - buf) + 4;
        }
      if (len >= cap)
        return 0;
      int left = bx_deadline_left (deadline);
      if (left == 0)
        return 0;
      struct timeval tv = { left / 1000, (left % 1000) * 1000 };
      setsockopt (client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ssize_t n = recv (client, buf + len, cap - len, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return 0;
      len += (size_t)n;
    }
}

/* The request's headers without the hop-by-hop ones a proxy consumes, and Connection: close
 * (the next request on a kept connection could name another host). */
static char *
origin_headers (const char *headers)
{
  char *out = bx_xstrdup ("");
  for (const char *line = headers; *line != '\0' && strncmp (line, "\r\n", 2) != 0;)
    {
      const char *eol = strstr (line, "\r\n");
      size_t len = eol ? (size_t)(eol - line) : strlen (line);
      if (strncasecmp (line, "proxy-", 6) != 0 && strncasecmp (line, "connection:", 11) != 0
          && strncasecmp (line, "keep-alive:", 11) != 0)
        {
          char *more = bx_xasprintf ("%s%.*s\r\n", out, (int)len, line);
          free (out);
          out = more;
        }
      line += len + (eol ? 2 : 0);
    }
  char *done = bx_xasprintf ("%sConnection: close\r\n\r\n", out);
  free (out);
  return done;
}

static void
handle_http (const char *proxy_socket, int client, char *buf, size_t have)
{
  cleanup_error bx_error err = NULL;
  size_t total = 0;
  size_t head = read_head (client, buf, BX_EGRESS_LOCAL_HEAD_MAX, have, &total);
  if (head == 0)
    {
      answer (client, 400, "boxmaker egress: expected an HTTP request head");
      return;
    }
  /* METHOD SP TARGET SP HTTP/1.x CRLF */
  char *line_end = strstr (buf, "\r\n");
  *line_end = '\0';
  char *method = buf;
  char *sp1 = strchr (method, ' ');
  char *sp2 = sp1 ? strchr (sp1 + 1, ' ') : NULL;
  if (sp1 == NULL || sp2 == NULL || strncmp (sp2 + 1, "HTTP/1.", 7) != 0)
    {
      answer (client, 400, "boxmaker egress: expected an HTTP/1 request line");
      return;
    }
  *sp1 = '\0';
  *sp2 = '\0';
  char *target = sp1 + 1;
  const char *host;
  unsigned port;

  if (strcmp (method, "CONNECT") == 0)
    {
      if (!split_authority (target, 0, &host, &port))
        {
          answer (client, 400, "boxmaker egress: CONNECT expects host:port");
          return;
        }
      cleanup_close int upstream = open_through (proxy_socket, client, host, port);
      if (upstream < 0)
        return;
      static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
      if (bx_write_full (client, ok, sizeof ok - 1, bx_deadline_in (BX_EGRESS_LOCAL_HEAD_MS), &err)
          < 0)
        return;
      /* Bytes the client sent after the head (a TLS hello sent at once) go first. */
      if (total > head
          && bx_write_full (upstream, buf + head, total - head,
                            bx_deadline_in (BX_EGRESS_LOCAL_HEAD_MS), &err)
                 < 0)
        return;
      bx_egress_copy (client, upstream, BX_EGRESS_COPY_POLL_BUFFER);
      return;
    }

  /* A plain HTTP request in absolute form: GET http://host[:port]/path HTTP/1.1. */
  if (strncasecmp (target, "http://", 7) != 0)
    {
      answer (client, 400,
              "boxmaker egress: expected CONNECT host:port, or a request for an http:// URL");
      return;
    }
  char *authority = target + 7;
  char *path = authority + strcspn (authority, "/?#");
  cleanup_free char *rest = bx_xstrdup (*path == '\0' ? "/" : path);
  *path = '\0';
  if (strchr (authority, '@') != NULL || !split_authority (authority, 80, &host, &port))
    {
      answer (client, 400, "boxmaker egress: expected http://host[:port]/path");
      return;
    }
  cleanup_close int upstream = open_through (proxy_socket, client, host, port);
  if (upstream < 0)
    return;
  cleanup_free char *headers = origin_headers (line_end + 2);
  cleanup_free char *request
      = bx_xasprintf ("%s %s %s\r\n%s", method, rest[0] == '/' ? rest : "/", sp2 + 1, headers);
  const int64_t deadline = bx_deadline_in (BX_EGRESS_LOCAL_HEAD_MS);
  if (bx_write_full (upstream, request, strlen (request), deadline, &err) < 0
      || (total > head && bx_write_full (upstream, buf + head, total - head, deadline, &err) < 0))
    return;
  bx_egress_copy (client, upstream, BX_EGRESS_COPY_POLL_BUFFER);
}

void
bx_egress_local_handle (const char *proxy_socket, int client_fd)
{
  cleanup_close int client = client_fd;
  cleanup_free char *buf = bx_xmalloc (BX_EGRESS_LOCAL_HEAD_MAX + 1);
  cleanup_error bx_error err = NULL;
  if (bx_read_full (client, buf, 1, bx_deadline_in (BX_EGRESS_LOCAL_HEAD_MS), &err) != 1)
    return;
  if (buf[0] == 5)
    {
      /* SOCKS5: the proxy speaks it already; its refusals are SOCKS reply codes. */
      cleanup_close int upstream = connect_proxy (proxy_socket);
      if (upstream < 0
          || bx_write_full (upstream, buf, 1, bx_deadline_in (BX_EGRESS_LOCAL_HEAD_MS), &err) < 0)
        return;
      bx_egress_copy (client, upstream, BX_EGRESS_COPY_POLL_BUFFER);
      return;
    }
  handle_http (proxy_socket, client, buf, 1);
}

static void *
conn_thread (void *arg)
{
  struct conn *c = arg;
  bx_egress_local_handle (c->server->proxy_socket, c->fd);
  atomic_fetch_sub (&c->server->active, 1);
  free (c);
  return NULL;
}

static void *
serve_thread (void *arg)
{
  struct server *s = arg;
  for (;;)
    {
      int fd = bx_accept_retrying (s->listener);
      if (fd < 0)
        return NULL;
      if (atomic_load (&s->active) >= BX_EGRESS_LOCAL_MAX)
        {
          close (fd);
          continue;
        }
      atomic_fetch_add (&s->active, 1);
      struct conn *c = bx_xmalloc (sizeof *c);
      c->server = s;
      c->fd = fd;
      pthread_attr_t attr;
      pthread_t t;
      pthread_attr_init (&attr);
      pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
      pthread_attr_setstacksize (&attr, 256 * 1024);
      if (pthread_create (&t, &attr, conn_thread, c) != 0)
        {
          close (fd);
          free (c);
          atomic_fetch_sub (&s->active, 1);
        }
      pthread_attr_destroy (&attr);
    }
}

int
bx_egress_local_start (const char *proxy_socket, uint16_t *port, bx_error *err)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return bx_error_set (err, errno, "cannot make the local proxy's socket");
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof sin;
  if (bind (fd, (struct sockaddr *)&sin, sizeof sin) < 0 || listen (fd, 64) < 0
      || getsockname (fd, (struct sockaddr *)&sin, &len) < 0)
    {
      int e = errno;
      close (fd);
      return bx_error_set (err, e, "cannot listen on 127.0.0.1");
    }
  struct server *s = bx_xzalloc (sizeof *s);
  s->proxy_socket = bx_xstrdup (proxy_socket);
  s->listener = fd;
  atomic_init (&s->active, 0);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&attr, 256 * 1024);
  int r = pthread_create (&t, &attr, serve_thread, s);
  pthread_attr_destroy (&attr);
  if (r != 0)
    {
      close (fd);
      free (s->proxy_socket);
      free (s);
      return bx_error_set (err, r, "cannot start the local proxy");
    }
  /* The serving thread owns the listener and the server for the rest of the process. */
  *port = ntohs (sin.sin_port);
  return 0;
}

int
bx_egress_local_for_shell (const char *proxy_socket, bx_error *err)
{
  uint16_t port = 0;
  if (bx_egress_local_start (proxy_socket, &port, err) < 0)
    return -1;
  char http[40], socks[40];
  snprintf (http, sizeof http, "http://127.0.0.1:%u", (unsigned)port);
  snprintf (socks, sizeof socks, "socks5h://127.0.0.1:%u", (unsigned)port);
  /* Both spellings: curl (and so git) reads only the lowercase http_proxy, other tools the
   * uppercase ones.  NO_PROXY is empty: every connection goes through the proxy. */
  static const char *const http_names[]
      = { "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy" };
  for (size_t i = 0; i < sizeof http_names / sizeof http_names[0]; i++)
    setenv (http_names[i], http, 1);
  setenv ("ALL_PROXY", socks, 1);
  setenv ("all_proxy", socks, 1);
  setenv ("NO_PROXY", "", 1);
  setenv ("no_proxy", "", 1);
  return 0;
}

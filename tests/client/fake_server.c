/* SPDX-License-Identifier: Apache-2.0 */
/* The scripted fake brokerd: see fake_server.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"

#include "fake_server.h"

static void *
serve (void *p)
{
  struct fake_server *s = p;
  if (s->script == NULL)
    return NULL;
  /* A test whose client never connects must not hang here: give up after 3 s. */
  struct pollfd pfd = { .fd = s->listen_fd, .events = POLLIN };
  if (poll (&pfd, 1, 3000) != 1)
    return NULL;
  int fd = accept4 (s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0)
    return NULL;
  s->connections++;
  s->script (s, fd);
  close (fd);
  return NULL;
}

void
fake_server_start (struct fake_server *s, fake_script script, const void *arg)
{
  memset (s, 0, sizeof *s);
  strcpy (s->dir, "/tmp/bx-client-test-XXXXXX");
  if (mkdtemp (s->dir) == NULL)
    abort ();
  snprintf (s->path, sizeof s->path, "%s/broker.sock", s->dir);
  s->listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  strcpy (addr.sun_path, s->path);
  if (s->listen_fd < 0 || bind (s->listen_fd, (struct sockaddr *)&addr, sizeof addr) < 0
      || listen (s->listen_fd, 8) < 0)
    abort ();
  s->script = script;
  s->arg = arg;
  if (pthread_create (&s->thread, NULL, serve, s) != 0)
    abort ();
}

void
fake_server_join (struct fake_server *s)
{
  if (s->joined)
    return;
  pthread_join (s->thread, NULL);
  s->joined = true;
}

bool
fake_server_has_pending (struct fake_server *s)
{
  struct pollfd pfd = { .fd = s->listen_fd, .events = POLLIN };
  return poll (&pfd, 1, 0) == 1;
}

void
fake_server_stop (struct fake_server *s)
{
  if (s->listen_fd <= 0)
    return;
  fake_server_join (s);
  close (s->listen_fd);
  s->listen_fd = -1;
  unlink (s->path);
  rmdir (s->dir);
  json_decref (s->request);
  s->request = NULL;
}

void
fake_read_request (struct fake_server *s, int fd)
{
  cleanup_error bx_error err = NULL;
  json_decref (s->request);
  s->request = NULL;
  if (bx_frame_read (fd, bx_deadline_in (3000), &s->request, &err) < 0)
    s->peer_closed = bx_error_code (err) == BX_FRAME_CLOSED;
}

void
fake_send_raw (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return; /* the client went away: that is what some tests want */
      p += n;
      len -= (size_t)n;
    }
}

void
fake_send_json (int fd, const char *text)
{
  size_t len = strlen (text);
  uint32_t be = htonl ((uint32_t)len);
  cleanup_free char *buf = bx_xmalloc (len + 4);
  memcpy (buf, &be, 4);
  memcpy (buf + 4, text, len);
  fake_send_raw (fd, buf, len + 4);
}

void
fake_wait_close (struct fake_server *s, int fd)
{
  char buf[4096];
  int64_t deadline = bx_deadline_in (5000);
  for (;;)
    {
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      if (poll (&pfd, 1, bx_deadline_left (deadline)) != 1)
        return;
      ssize_t n = read (fd, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
        {
          s->peer_closed = true;
          return;
        }
    }
}

char *
fake_format (const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  va_start (ap, fmt);
  if (vasprintf (&s, fmt, ap) < 0)
    abort ();
  va_end (ap);
  return s;
}

int64_t
fake_unix_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

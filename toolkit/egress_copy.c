/* SPDX-License-Identifier: Apache-2.0 */
/* The copy after the handshake: bytes both ways, untouched, until both directions have
 * ended, each end passed on as a half-close (shutdown of the write side).
 *
 * Two shapes, each with splice(2) through a pipe or a 64 KiB buffer:
 *   - one thread per direction, blocking calls (the simplest shape);
 *   - one thread for both, poll(2) and non-blocking calls: no second thread to start and
 *     join per connection; with splice, each direction takes its pipe only once it carries
 *     more than a buffer's worth (start_splice).
 * bench/egress/run.sh measures all four; egress.c's default (poll and splice) is the fastest
 * there, and the others stay selectable (bx_egress_config) so the choice can be measured
 * again on another kernel. */
#include "egress.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bx/cleanup.h"

#define COPY_CHUNK (64 * 1024)
/* splice moves up to a pipe's worth per call: a 1 MiB pipe (the default pipe-max-size) makes
 * far fewer calls and wake-ups than the 64 KiB default: 1.3 to 1.4 times the throughput in
 * bench/egress.  Only pages in flight are held.  When the size cannot be raised, the
 * default pipe serves. */
#define SPLICE_PIPE (1024 * 1024)
/* What a direction that will splice reads into before it has its pipe (start_splice): on
 * the thread's stack, so an idle proxy keeps no copy buffers. */
#define SPLICE_FIRST (16 * 1024)

/* ---- one thread per direction ---- */

static bool
blocking_buffer (int from, int to)
{
  cleanup_free char *buf = bx_xmalloc (COPY_CHUNK);
  for (;;)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (from, buf, COPY_CHUNK));
      if (n == 0)
        return true;
      if (n < 0)
        return false;
      for (ssize_t off = 0; off < n;)
        {
          ssize_t w = TEMP_FAILURE_RETRY (send (to, buf + off, n - off, MSG_NOSIGNAL));
          if (w < 0)
            return false;
          off += w;
        }
    }
}

static bool
blocking_splice (int from, int to)
{
  int pipe_fds[2];
  if (pipe2 (pipe_fds, O_CLOEXEC) < 0)
    return blocking_buffer (from, to);
  cleanup_close int rd = pipe_fds[0];
  cleanup_close int wr = pipe_fds[1];
  int pipe_size = fcntl (wr, F_SETPIPE_SZ, SPLICE_PIPE);
  size_t chunk = pipe_size > 0 ? (size_t)pipe_size : COPY_CHUNK;
  /* No SPLICE_F_MORE: it corks the TCP side, and TLS's small handshake records would wait. */
  for (;;)
    {
      ssize_t n = TEMP_FAILURE_RETRY (splice (from, NULL, wr, NULL, chunk, SPLICE_F_MOVE));
      if (n == 0)
        return true;
      if (n < 0)
        return false;
      while (n > 0)
        {
          ssize_t w = TEMP_FAILURE_RETRY (splice (rd, NULL, to, NULL, n, SPLICE_F_MOVE));
          if (w < 0)
            return false;
          n -= w;
        }
    }
}

struct thread_direction
{
  int from, to;
  bool use_splice;
};

/* One direction to its end, then the half-close passed on.  When the write side failed, the
 * source is shut for reading too, so its writer learns at once instead of filling buffers
 * nobody reads. */
static void
run_direction (const struct thread_direction *d)
{
  bool ok = d->use_splice ? blocking_splice (d->from, d->to) : blocking_buffer (d->from, d->to);
  shutdown (d->to, SHUT_WR);
  if (!ok)
    shutdown (d->from, SHUT_RD);
}

static void *
direction_thread (void *arg)
{
  run_direction (arg);
  return NULL;
}

static void
copy_threads (int client, int server, bool use_splice)
{
  struct thread_direction up = { client, server, use_splice };
  struct thread_direction down = { server, client, use_splice };
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init (&attr) != 0)
    return;
  pthread_attr_setstacksize (&attr, 256 * 1024);
  int r = pthread_create (&thread, &attr, direction_thread, &up);
  pthread_attr_destroy (&attr);
  if (r != 0)
    return;
  run_direction (&down);
  pthread_join (thread, NULL);
}

/* ---- one thread, poll ---- */

struct poll_direction
{
  int from, to;
  bool may_splice; /* splice once a read fills the buffer (below) */
  bool use_splice;
  int pipe_rd, pipe_wr; /* splice */
  size_t chunk;         /* splice: what the pipe holds */
  char *buf;            /* buffer */
  size_t buf_size;
  size_t off;
  size_t pending; /* bytes read from FROM, not yet written to TO */
  bool filled;    /* the last read filled the buffer: more is coming */
  bool eof;       /* FROM has ended */
  bool done;      /* the end (or a failure) was passed on */
};

static bool
would_block (void)
{
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

static void
finish (struct poll_direction *d, bool ok)
{
  shutdown (d->to, SHUT_WR);
  if (!ok)
    shutdown (d->from, SHUT_RD);
  d->done = true;
}

/* D's pipe, from now on: its bytes then move without a copy through this process.  Each
 * direction starts with the buffer and takes a pipe only once a read fills it, so a
 * connection that carries little (a request, a short answer) makes and closes no pipe, a
 * cost that counted in the proxy's connections per second (bench/egress).  Without a pipe,
 * the buffer goes on serving. */
static void
start_splice (struct poll_direction *d)
{
  d->may_splice = false;
  int p[2];
  if (pipe2 (p, O_CLOEXEC | O_NONBLOCK) < 0)
    return;
  d->pipe_rd = p[0];
  d->pipe_wr = p[1];
  int pipe_size = fcntl (p[1], F_SETPIPE_SZ, SPLICE_PIPE);
  d->chunk = pipe_size > 0 ? (size_t)pipe_size : COPY_CHUNK;
  d->use_splice = true;
}

/* Moves what it can without blocking: reads when nothing is pending, writes what is. */
static void
step (struct poll_direction *d)
{
  if (d->pending == 0 && !d->eof)
    {
      ssize_t n;
      if (d->use_splice)
        n = splice (d->from, NULL, d->pipe_wr, NULL, d->chunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      else
        n = read (d->from, d->buf, d->buf_size);
      if (n < 0 && would_block ())
        return;
      if (n < 0)
        return finish (d, false);
      if (n == 0)
        d->eof = true;
      d->pending = n;
      d->off = 0;
      d->filled = !d->use_splice && (size_t)n == d->buf_size;
    }
  while (d->pending > 0)
    {
      ssize_t w;
      if (d->use_splice)
        w = splice (d->pipe_rd, NULL, d->to, NULL, d->pending, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      else
        w = send (d->to, d->buf + d->off, d->pending, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0 && would_block ())
        return;
      if (w <= 0)
        return finish (d, false);
      d->pending -= w;
      d->off += w;
    }
  if (d->eof)
    finish (d, true);
  else if (d->filled && d->may_splice)
    start_splice (d);
}

static bool
set_nonblocking (int fd)
{
  int flags = fcntl (fd, F_GETFL);
  return flags >= 0 && fcntl (fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

static void
copy_poll (int client, int server, bool use_splice)
{
  struct poll_direction d[2] = {
    { .from = client, .to = server, .may_splice = use_splice, .pipe_rd = -1, .pipe_wr = -1 },
    { .from = server, .to = client, .may_splice = use_splice, .pipe_rd = -1, .pipe_wr = -1 },
  };
  if (!set_nonblocking (client) || !set_nonblocking (server))
    return;
  char first[2][SPLICE_FIRST];
  for (int i = 0; i < 2; i++)
    {
      d[i].buf = use_splice ? first[i] : bx_xmalloc (COPY_CHUNK);
      d[i].buf_size = use_splice ? SPLICE_FIRST : COPY_CHUNK;
    }

  while (!d[0].done || !d[1].done)
    {
      struct pollfd fds[2];
      int n = 0;
      int which[2];
      for (int i = 0; i < 2; i++)
        {
          if (d[i].done)
            continue;
          /* Waiting to read FROM, or to write what is pending to TO. */
          fds[n].fd = d[i].pending > 0 ? d[i].to : d[i].from;
          fds[n].events = d[i].pending > 0 ? POLLOUT : POLLIN;
          which[n++] = i;
        }
      if (poll (fds, n, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      for (int k = 0; k < n; k++)
        if (fds[k].revents != 0)
          step (&d[which[k]]);
    }

  for (int i = 0; i < 2; i++)
    {
      if (d[i].pipe_rd >= 0)
        {
          close (d[i].pipe_rd);
          close (d[i].pipe_wr);
        }
      if (!use_splice)
        free (d[i].buf);
    }
}

void
bx_egress_copy (int client, int server, enum bx_egress_copy mode)
{
  /* On a Unix socket the writer's send buffer bounds what is in flight towards the reader;
   * the default (about 200 KiB) makes the proxy wait on curl's reads more often.  (Its gain
   * in bench/egress was small, within the noise of a shared machine; it holds memory only
   * while bytes wait.) */
  int sndbuf = 1024 * 1024;
  setsockopt (client, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  switch (mode)
    {
    case BX_EGRESS_COPY_SPLICE:
      copy_threads (client, server, true);
      break;
    case BX_EGRESS_COPY_BUFFER:
      copy_threads (client, server, false);
      break;
    case BX_EGRESS_COPY_POLL_SPLICE:
      copy_poll (client, server, true);
      break;
    case BX_EGRESS_COPY_POLL_BUFFER:
      copy_poll (client, server, false);
      break;
    }
}

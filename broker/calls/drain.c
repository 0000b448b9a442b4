/* SPDX-License-Identifier: Apache-2.0 */
/* Refused connections drained off the workers: see drain.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "drain.h"
#include "loop.h"
#include "notify.h"

/* How many refused connections wait at once; past that a refusal closes at once (its
 * client may then see EPIPE instead of the refusal, which is still a refusal). */
#define DRAIN_MAX 128

/* A connection handed over by a worker, not yet taken by the loop. */
struct handed
{
  int fd;
  int64_t deadline;
  size_t max;
};

/* A connection the loop drains: read until its client closes, its bytes are all dropped, or
 * its deadline. */
struct held
{
  struct bx_drainer *d;
  int fd;
  size_t left; /* bytes still to read and drop */
  sd_event_source *io;
  sd_event_source *timer;
  struct held *prev, *next;
};

struct bx_drainer
{
  sd_event *loop;
  int wake_fd;
  sd_event_source *wake;
  pthread_mutex_t lock;
  /* Under the lock: what the workers handed over, and how many connections the drainer
   * has (handed over or held), which DRAIN_MAX bounds. */
  struct handed handed[DRAIN_MAX];
  unsigned n_handed;
  unsigned n;
  bool stopping;
  struct held *held; /* the loop's alone */
};

/* Closes H; on the loop. */
static void
release (struct held *h)
{
  struct bx_drainer *d = h->d;
  if (h->prev != NULL)
    h->prev->next = h->next;
  else
    d->held = h->next;
  if (h->next != NULL)
    h->next->prev = h->prev;
  sd_event_source_disable_unref (h->io);
  sd_event_source_disable_unref (h->timer);
  close (h->fd);
  free (h);
  pthread_mutex_lock (&d->lock);
  d->n--;
  pthread_mutex_unlock (&d->lock);
}

/* Reads and drops what H's client sent; true when it is done with. */
static bool
drain_one (struct held *h)
{
  char buf[4096];
  for (;;)
    {
      ssize_t n = TEMP_FAILURE_RETRY (recv (h->fd, buf, sizeof buf, MSG_DONTWAIT));
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return false;
      if (n <= 0 || (size_t)n >= h->left)
        return true;
      h->left -= (size_t)n;
    }
}

static int
on_readable (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)fd;
  (void)revents;
  struct held *h = userdata;
  if (drain_one (h))
    release (h);
  return 0;
}

static int
on_deadline (sd_event_source *src, uint64_t usec, void *userdata)
{
  (void)src;
  (void)usec;
  release (userdata);
  return 0;
}

/* Starts draining what a worker handed over; on the loop.  A connection the loop cannot
 * watch is closed at once. */
static void
hold (struct bx_drainer *d, const struct handed *in)
{
  struct held *h = bx_xzalloc (sizeof *h);
  h->d = d;
  h->fd = in->fd;
  h->left = in->max;
  h->next = d->held;
  if (d->held != NULL)
    d->held->prev = h;
  d->held = h;
  if (sd_event_add_io (d->loop, &h->io, h->fd, EPOLLIN | EPOLLRDHUP, on_readable, h) < 0
      || sd_event_add_time (d->loop, &h->timer, CLOCK_MONOTONIC, (uint64_t)in->deadline * 1000,
                            BX_LOOP_ACCURACY_US, on_deadline, h)
             < 0)
    release (h);
}

/* Workers handed connections over. */
static int
on_wake (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)revents;
  struct bx_drainer *d = userdata;
  uint64_t count;
  (void)TEMP_FAILURE_RETRY (read (fd, &count, sizeof count));
  struct handed taken[DRAIN_MAX];
  pthread_mutex_lock (&d->lock);
  unsigned n = d->n_handed;
  memcpy (taken, d->handed, n * sizeof taken[0]);
  d->n_handed = 0;
  pthread_mutex_unlock (&d->lock);
  for (unsigned i = 0; i < n; i++)
    hold (d, &taken[i]);
  return 0;
}

int
bx_drainer_start (sd_event *loop, struct bx_drainer **out, bx_error *err)
{
  struct bx_drainer *d = bx_xzalloc (sizeof *d);
  d->loop = sd_event_ref (loop);
  d->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  pthread_mutex_init (&d->lock, NULL);
  int r
      = d->wake_fd < 0 ? -errno : sd_event_add_io (loop, &d->wake, d->wake_fd, EPOLLIN, on_wake, d);
  if (r < 0)
    {
      bx_error_set (err, -r, "cannot drain refused connections");
      if (d->wake_fd >= 0)
        close (d->wake_fd);
      pthread_mutex_destroy (&d->lock);
      sd_event_unref (d->loop);
      free (d);
      return -1;
    }
  *out = d;
  return 0;
}

void
bx_drainer_add (struct bx_drainer *d, int fd, int64_t ms, size_t max)
{
  pthread_mutex_lock (&d->lock);
  if (d->stopping || d->n == DRAIN_MAX)
    {
      pthread_mutex_unlock (&d->lock);
      close (fd);
      return;
    }
  d->handed[d->n_handed++]
      = (struct handed){ .fd = fd, .deadline = bx_deadline_in (ms), .max = max };
  d->n++;
  pthread_mutex_unlock (&d->lock);
  uint64_t one = 1;
  (void)TEMP_FAILURE_RETRY (write (d->wake_fd, &one, sizeof one));
}

void
bx_drainer_stop (struct bx_drainer *d)
{
  if (d == NULL)
    return;
  pthread_mutex_lock (&d->lock);
  d->stopping = true;
  for (unsigned i = 0; i < d->n_handed; i++)
    close (d->handed[i].fd);
  d->n -= d->n_handed;
  d->n_handed = 0;
  pthread_mutex_unlock (&d->lock);
  for (struct held *h = d->held, *next; h != NULL; h = next)
    {
      next = h->next;
      release (h);
    }
  sd_event_source_disable_unref (d->wake);
  close (d->wake_fd);
  pthread_mutex_destroy (&d->lock);
  sd_event_unref (d->loop);
  free (d);
}

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
#include "notify.h"

/* How many refused connections wait at once; past that a refusal closes at once (its
 * client may then see EPIPE instead of the refusal, which is still a refusal). */
#define DRAIN_MAX 128
/* The epoll data of the eventfd that wakes the thread (connections use their fd). */
#define WAKE_KEY UINT64_MAX

struct held
{
  int fd; /* -1: a free slot */
  int64_t deadline;
  size_t left; /* bytes still to read and drop */
};

struct bx_drainer
{
  int epoll_fd;
  int wake_fd;
  pthread_t thread;
  pthread_mutex_t lock;
  struct held held[DRAIN_MAX];
  unsigned n;
  bool stopping;
};

/* Closes slot I; the lock is held. */
static void
release_locked (struct bx_drainer *d, unsigned i)
{
  epoll_ctl (d->epoll_fd, EPOLL_CTL_DEL, d->held[i].fd, NULL);
  close (d->held[i].fd);
  d->held[i].fd = -1;
  d->n--;
}

/* Reads and drops what slot I's client sent; true when it is done with. */
static bool
drain_one (struct held *h)
{
  char buf[4096];
  for (;;)
    {
      ssize_t n = recv (h->fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return false;
      if (n <= 0 || (size_t)n >= h->left)
        return true;
      h->left -= (size_t)n;
    }
}

static void *
drain_main (void *arg)
{
  struct bx_drainer *d = arg;
  pthread_mutex_lock (&d->lock);
  while (!d->stopping)
    {
      /* Those past their time go; the next deadline sets the wait. */
      int64_t next = -1;
      for (unsigned i = 0; i < DRAIN_MAX; i++)
        if (d->held[i].fd >= 0)
          {
            int64_t left = bx_deadline_left (d->held[i].deadline);
            if (left <= 0)
              release_locked (d, i);
            else if (next < 0 || left < next)
              next = left;
          }
      pthread_mutex_unlock (&d->lock);
      struct epoll_event ev[32];
      int n = epoll_wait (d->epoll_fd, ev, 32, next < 0 ? -1 : (int)next);
      int e = errno;
      pthread_mutex_lock (&d->lock);
      if (n < 0 && e != EINTR)
        {
          bx_log (LOG_ERR, NULL, "draining refused connections: %s", strerror (e));
          break;
        }
      for (int k = 0; k < n; k++)
        {
          if (ev[k].data.u64 == WAKE_KEY)
            {
              uint64_t count;
              while (read (d->wake_fd, &count, sizeof count) < 0 && errno == EINTR)
                ;
              continue;
            }
          for (unsigned i = 0; i < DRAIN_MAX; i++)
            if (d->held[i].fd == (int)ev[k].data.u64)
              {
                if (drain_one (&d->held[i]))
                  release_locked (d, i);
                break;
              }
        }
    }
  pthread_mutex_unlock (&d->lock);
  return NULL;
}

int
bx_drainer_start (struct bx_drainer **out, bx_error *err)
{
  struct bx_drainer *d = bx_xzalloc (sizeof *d);
  for (unsigned i = 0; i < DRAIN_MAX; i++)
    d->held[i].fd = -1;
  d->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  d->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  pthread_mutex_init (&d->lock, NULL);
  struct epoll_event ev = { .events = EPOLLIN, .data.u64 = WAKE_KEY };
  int r;
  if (d->epoll_fd < 0 || d->wake_fd < 0
      || epoll_ctl (d->epoll_fd, EPOLL_CTL_ADD, d->wake_fd, &ev) < 0)
    r = bx_error_set (err, errno, "cannot drain refused connections");
  else if ((r = pthread_create (&d->thread, NULL, drain_main, d)) != 0)
    r = bx_error_set (err, r, "cannot start the thread that drains refused connections");
  if (r != 0)
    {
      if (d->epoll_fd >= 0)
        close (d->epoll_fd);
      if (d->wake_fd >= 0)
        close (d->wake_fd);
      pthread_mutex_destroy (&d->lock);
      free (d);
      return -1;
    }
  *out = d;
  return 0;
}

static void
wake (struct bx_drainer *d)
{
  uint64_t one = 1;
  while (write (d->wake_fd, &one, sizeof one) < 0 && errno == EINTR)
    ;
}

void
bx_drainer_add (struct bx_drainer *d, int fd, int64_t ms, size_t max)
{
  pthread_mutex_lock (&d->lock);
  unsigned i = 0;
  while (i < DRAIN_MAX && d->held[i].fd >= 0)
    i++;
  struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u64 = (uint64_t)fd };
  if (d->stopping || i == DRAIN_MAX || epoll_ctl (d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
    {
      pthread_mutex_unlock (&d->lock);
      close (fd);
      return;
    }
  d->held[i] = (struct held){ .fd = fd, .deadline = bx_deadline_in (ms), .left = max };
  d->n++;
  pthread_mutex_unlock (&d->lock);
  /* Its deadline may come before the one the thread waits for. */
  wake (d);
}

void
bx_drainer_stop (struct bx_drainer *d)
{
  if (d == NULL)
    return;
  pthread_mutex_lock (&d->lock);
  d->stopping = true;
  pthread_mutex_unlock (&d->lock);
  wake (d);
  pthread_join (d->thread, NULL);
  for (unsigned i = 0; i < DRAIN_MAX; i++)
    if (d->held[i].fd >= 0)
      close (d->held[i].fd);
  close (d->epoll_fd);
  close (d->wake_fd);
  pthread_mutex_destroy (&d->lock);
  free (d);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Cancellation: see cancel.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "cancel.h"
#include "notify.h"
#include "run_spec.h"

/* The id of the eventfd that wakes the thread; calls get ids from 1. */
#define WAKE_ID 0

struct bx_canceller
{
  int epoll_fd;
  int wake_fd;
  pthread_t thread;
  pthread_mutex_t lock;
  struct bx_cancel_watch *watches; /* every watch, newest first; some in the epoll set */
  uint64_t next_id;
  bool waiting; /* the thread waits with no deadline: a new watch must wake it */
  bool stopping;
};

static void
wake (struct bx_canceller *c)
{
  uint64_t one = 1;
  while (write (c->wake_fd, &one, sizeof one) < 0 && errno == EINTR)
    ;
}

/* Cancels W; the lock is held. */
static void
cancel_locked (struct bx_canceller *c, struct bx_cancel_watch *w)
{
  bx_run_spec_cancel (w->spec);
  w->cancelled = true;
}

static void
unlink_locked (struct bx_canceller *c, struct bx_cancel_watch *w)
{
  for (struct bx_cancel_watch **p = &c->watches; *p != NULL; p = &(*p)->next)
    if (*p == w)
      {
        *p = w->next;
        break;
      }
  w->listed = false;
  if (w->registered)
    epoll_ctl (c->epoll_fd, EPOLL_CTL_DEL, w->client_fd, NULL);
  w->registered = false;
}

/* Puts the clients of the runs that have lasted long enough into the epoll set; returns how
 * long until the next one is due, in ms, or -1 when none waits.  The lock is held. */
static int
register_due (struct bx_canceller *c)
{
  const int64_t after = (int64_t)BX_CANCEL_WATCH_AFTER_MS * 1000000;
  int64_t now = bx_now_ns ();
  int64_t next = -1;
  for (struct bx_cancel_watch **p = &c->watches; *p != NULL;)
    {
      struct bx_cancel_watch *w = *p;
      int64_t left = w->since_ns + after - now;
      if (w->registered || left > 0)
        {
          if (!w->registered && (next < 0 || left < next))
            next = left;
          p = &w->next;
          continue;
        }
      /* Level-triggered: a client gone before this is reported at once. */
      struct epoll_event ev = { .events = EPOLLRDHUP, .data.u64 = w->id };
      if (epoll_ctl (c->epoll_fd, EPOLL_CTL_ADD, w->client_fd, &ev) == 0)
        {
          w->registered = true;
          p = &w->next;
        }
      else
        {
          /* Not watchable (out of memory): the run goes on unwatched. */
          bx_log (LOG_ERR, NULL, "watching clients: %s", strerror (errno));
          *p = w->next;
          w->listed = false;
        }
    }
  return next < 0 ? -1 : (int)((next + 999999) / 1000000);
}

static void *
watch_main (void *arg)
{
  struct bx_canceller *c = arg;
  /* Nothing due at one look: look again a little later before sleeping without a deadline.
   * Calls come and go within that time on a busy brokerd, and a thread that slept after
   * each would be woken by each. */
  bool empty_before = false;
  pthread_mutex_lock (&c->lock);
  while (!c->stopping)
    {
      int timeout = register_due (c);
      if (timeout < 0 && !empty_before)
        {
          timeout = BX_CANCEL_WATCH_AFTER_MS;
          empty_before = true;
        }
      else if (timeout >= 0)
        empty_before = false;
      c->waiting = timeout < 0;
      pthread_mutex_unlock (&c->lock);
      struct epoll_event ev[16];
      int n = epoll_wait (c->epoll_fd, ev, 16, timeout);
      int e = errno;
      pthread_mutex_lock (&c->lock);
      c->waiting = false;
      if (timeout < 0)
        empty_before = false; /* woken by a new watch: look again at it a tick later */
      if (n < 0)
        {
          if (e == EINTR)
            continue;
          bx_log (LOG_ERR, NULL, "watching clients: %s", strerror (e));
          break;
        }
      for (int i = 0; i < n; i++)
        {
          if (ev[i].data.u64 == WAKE_ID)
            {
              uint64_t count;
              while (read (c->wake_fd, &count, sizeof count) < 0 && errno == EINTR)
                ;
              continue;
            }
          /* By id, not by pointer: the call may have ended (and its watch gone) between
           * epoll_wait and the lock. */
          for (struct bx_cancel_watch *w = c->watches; w != NULL; w = w->next)
            if (w->id == ev[i].data.u64)
              {
                if (ev[i].events & (EPOLLHUP | EPOLLERR))
                  {
                    cancel_locked (c, w);
                    unlink_locked (c, w);
                  }
                else
                  {
                    /* POLLRDHUP alone: the client shut down its sending side and may still
                     * read the answer (as while it waits for approval).  From now on only
                     * a hang-up counts, which epoll reports without asking. */
                    struct epoll_event quiet = { .events = 0, .data.u64 = w->id };
                    epoll_ctl (c->epoll_fd, EPOLL_CTL_MOD, w->client_fd, &quiet);
                  }
                break;
              }
        }
    }
  pthread_mutex_unlock (&c->lock);
  return NULL;
}

int
bx_canceller_start (struct bx_canceller **out, bx_error *err)
{
  struct bx_canceller *c = bx_xzalloc (sizeof *c);
  c->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  c->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  c->next_id = WAKE_ID + 1;
  pthread_mutex_init (&c->lock, NULL);
  struct epoll_event ev = { .events = EPOLLIN, .data.u64 = WAKE_ID };
  int r;
  if (c->epoll_fd < 0 || c->wake_fd < 0
      || epoll_ctl (c->epoll_fd, EPOLL_CTL_ADD, c->wake_fd, &ev) < 0)
    r = bx_error_set (err, errno, "cannot watch clients for cancellation");
  else if ((r = pthread_create (&c->thread, NULL, watch_main, c)) != 0)
    r = bx_error_set (err, r, "cannot start the thread that watches clients");
  if (r != 0)
    {
      if (c->epoll_fd >= 0)
        close (c->epoll_fd);
      if (c->wake_fd >= 0)
        close (c->wake_fd);
      pthread_mutex_destroy (&c->lock);
      free (c);
      return -1;
    }
  *out = c;
  return 0;
}

void
bx_canceller_stop (struct bx_canceller *c)
{
  if (c == NULL)
    return;
  pthread_mutex_lock (&c->lock);
  c->stopping = true;
  pthread_mutex_unlock (&c->lock);
  wake (c);
  pthread_join (c->thread, NULL);
  close (c->epoll_fd);
  close (c->wake_fd);
  pthread_mutex_destroy (&c->lock);
  free (c);
}

void
bx_cancel_watch_start (struct bx_canceller *c, struct bx_cancel_watch *w, int client_fd,
                       bx_run_spec *spec)
{
  memset (w, 0, sizeof *w);
  w->canceller = c;
  w->client_fd = client_fd;
  w->spec = spec;
  if (c == NULL || spec == NULL)
    return;
  w->since_ns = bx_now_ns ();
  pthread_mutex_lock (&c->lock);
  w->id = c->next_id++;
  w->listed = true;
  w->next = c->watches;
  c->watches = w;
  /* The thread sleeps without a deadline when nothing is due: it needs one now. */
  bool must_wake = c->waiting;
  c->waiting = false;
  pthread_mutex_unlock (&c->lock);
  if (must_wake)
    wake (c);
}

bool
bx_cancel_watch_end (struct bx_cancel_watch *w)
{
  struct bx_canceller *c = w->canceller;
  if (c == NULL)
    return false;
  pthread_mutex_lock (&c->lock);
  if (w->listed)
    unlink_locked (c, w);
  bool cancelled = w->cancelled;
  pthread_mutex_unlock (&c->lock);
  return cancelled;
}

void
bx_canceller_cancel_all (struct bx_canceller *c)
{
  if (c == NULL)
    return;
  pthread_mutex_lock (&c->lock);
  while (c->watches != NULL)
    {
      struct bx_cancel_watch *w = c->watches;
      cancel_locked (c, w);
      unlink_locked (c, w);
    }
  pthread_mutex_unlock (&c->lock);
}

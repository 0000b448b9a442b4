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
#include "loop.h"
#include "notify.h"
#include "run_spec.h"

/* The id of the eventfd that wakes the thread; calls get ids from 1. */
#define WAKE_ID 0

struct bx_canceller
{
  int epoll_fd;
  int wake_fd;
  /* On brokerd's loop: the epoll set (readable when a client it holds hung up, or when a
   * new watch woke it), and the timer that puts the runs that lasted long enough into it. */
  sd_event_source *set;
  sd_event_source *timer;
  pthread_mutex_t lock;
  struct bx_cancel_watch *watches; /* every watch, newest first; some in the epoll set */
  uint64_t next_id;
  bool waiting; /* the timer is off: a new watch must wake the loop (and clears this) */
  bool asleep;  /* the timer is off: the loop's own record, which watches leave alone */
  /* Nothing was due at the last look: the timer looks once more before it goes off. */
  bool empty_before;
};

static void
wake (struct bx_canceller *c)
{
  uint64_t one = 1;
  (void)TEMP_FAILURE_RETRY (write (c->wake_fd, &one, sizeof one));
}

/* Cancels W; the lock is held. */
static void
cancel_locked (struct bx_canceller *c, struct bx_cancel_watch *w)
{
  (void)c;
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

/* Registers what is due and sets the timer for what comes next; the lock is held.  With
 * nothing due, the timer looks once more a little later before it goes off: calls come and
 * go within that time on a busy brokerd, and a loop woken by each would cost each a
 * write. */
static void
schedule_locked (struct bx_canceller *c)
{
  int timeout = register_due (c);
  if (timeout < 0 && !c->empty_before)
    {
      timeout = BX_CANCEL_WATCH_AFTER_MS;
      c->empty_before = true;
    }
  else if (timeout >= 0)
    c->empty_before = false;
  c->waiting = c->asleep = timeout < 0;
  if (c->asleep)
    sd_event_source_set_enabled (c->timer, SD_EVENT_OFF);
  else
    {
      sd_event_source_set_time_relative (c->timer, (uint64_t)timeout * 1000);
      sd_event_source_set_enabled (c->timer, SD_EVENT_ONESHOT);
    }
}

/* What the epoll set reports: hang-ups, and wake-ups from new watches. */
static void
take_events_locked (struct bx_canceller *c)
{
  struct epoll_event ev[16];
  int n = epoll_wait (c->epoll_fd, ev, 16, 0);
  for (int i = 0; i < n; i++)
    {
      if (ev[i].data.u64 == WAKE_ID)
        {
          uint64_t count;
          (void)TEMP_FAILURE_RETRY (read (c->wake_fd, &count, sizeof count));
          continue;
        }
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
                 * read the answer (as while it waits for approval).  From now on only a
                 * hang-up counts, which epoll reports without asking. */
                struct epoll_event quiet = { .events = 0, .data.u64 = w->id };
                epoll_ctl (c->epoll_fd, EPOLL_CTL_MOD, w->client_fd, &quiet);
              }
            break;
          }
    }
}

static int
on_set (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)fd;
  (void)revents;
  struct bx_canceller *c = userdata;
  pthread_mutex_lock (&c->lock);
  if (c->asleep)
    c->empty_before = false; /* woken by a new watch: look again at it a tick later */
  take_events_locked (c);
  schedule_locked (c);
  pthread_mutex_unlock (&c->lock);
  return 0;
}

static int
on_timer (sd_event_source *src, uint64_t usec, void *userdata)
{
  (void)src;
  (void)usec;
  struct bx_canceller *c = userdata;
  pthread_mutex_lock (&c->lock);
  schedule_locked (c);
  pthread_mutex_unlock (&c->lock);
  return 0;
}

int
bx_canceller_start (sd_event *loop, struct bx_canceller **out, bx_error *err)
{
  struct bx_canceller *c = bx_xzalloc (sizeof *c);
  c->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  c->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  c->next_id = WAKE_ID + 1;
  c->waiting = c->asleep = true;
  pthread_mutex_init (&c->lock, NULL);
  struct epoll_event ev = { .events = EPOLLIN, .data.u64 = WAKE_ID };
  int r = 0;
  if (c->epoll_fd < 0 || c->wake_fd < 0
      || epoll_ctl (c->epoll_fd, EPOLL_CTL_ADD, c->wake_fd, &ev) < 0)
    r = -errno;
  if (r == 0)
    r = sd_event_add_io (loop, &c->set, c->epoll_fd, EPOLLIN, on_set, c);
  if (r == 0)
    r = sd_event_add_time_relative (loop, &c->timer, CLOCK_MONOTONIC, 0, BX_LOOP_ACCURACY_US,
                                    on_timer, c);
  if (r == 0)
    r = sd_event_source_set_enabled (c->timer, SD_EVENT_OFF);
  if (r < 0)
    {
      bx_error_set (err, -r, "cannot watch clients for cancellation");
      bx_canceller_stop (c);
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
  sd_event_source_disable_unref (c->set);
  sd_event_source_disable_unref (c->timer);
  if (c->epoll_fd >= 0)
    close (c->epoll_fd);
  if (c->wake_fd >= 0)
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
  /* The loop's timer is off when nothing is due: it needs one now. */
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

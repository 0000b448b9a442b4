/* SPDX-License-Identifier: Apache-2.0 */
/* Fair admission to the module.  See fair.h. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "fair.h"

struct uid_count
{
  int64_t uid;
  unsigned running;
};

/* A call waiting for its run: woken through its own eventfd, so it can wait for its
 * cancellation at the same time. */
struct waiter
{
  int64_t uid;
  int wake_fd;
  bool admitted;
  struct waiter *next;
};

struct bx_fair
{
  pthread_mutex_t lock;
  unsigned max, per_uid;
  unsigned running;
  struct uid_count *uids; /* the uids running calls: a handful, searched in turn */
  size_t n_uids, cap_uids;
  struct waiter *first, *last; /* in the order they came */
  unsigned waiting;
  bool closed; /* bx_fair_close: no more waits */
};

struct bx_fair *
bx_fair_new (unsigned max, unsigned per_uid)
{
  struct bx_fair *f = bx_xzalloc (sizeof *f);
  pthread_mutex_init (&f->lock, NULL);
  f->max = max > 0 ? max : 1;
  f->per_uid = per_uid > 0 ? per_uid : 1;
  return f;
}

void
bx_fair_free (struct bx_fair *f)
{
  if (f == NULL)
    return;
  pthread_mutex_destroy (&f->lock);
  free (f->uids);
  free (f);
}

static unsigned
running_of (const struct bx_fair *f, int64_t uid)
{
  for (size_t i = 0; i < f->n_uids; i++)
    if (f->uids[i].uid == uid)
      return f->uids[i].running;
  return 0;
}

/* One more run for UID; the lock is held. */
static void
take (struct bx_fair *f, int64_t uid)
{
  f->running++;
  for (size_t i = 0; i < f->n_uids; i++)
    if (f->uids[i].uid == uid)
      {
        f->uids[i].running++;
        return;
      }
  if (f->n_uids == f->cap_uids)
    {
      f->cap_uids = f->cap_uids ? f->cap_uids * 2 : 8;
      f->uids = bx_xrealloc (f->uids, f->cap_uids * sizeof *f->uids);
    }
  f->uids[f->n_uids++] = (struct uid_count){ uid, 1 };
}

/* One run less for UID; the lock is held. */
static void
give_back (struct bx_fair *f, int64_t uid)
{
  if (f->running > 0)
    f->running--;
  for (size_t i = 0; i < f->n_uids; i++)
    if (f->uids[i].uid == uid)
      {
        if (--f->uids[i].running == 0)
          f->uids[i] = f->uids[--f->n_uids];
        return;
      }
}

static void
unlink_waiter (struct bx_fair *f, struct waiter *w)
{
  struct waiter **p = &f->first, *prev = NULL;
  while (*p != NULL && *p != w)
    {
      prev = *p;
      p = &(*p)->next;
    }
  if (*p == NULL)
    return;
  *p = w->next;
  if (f->last == w)
    f->last = prev;
  f->waiting--;
}

/* Hands free runs to waiting calls: each to the waiting call whose uid runs the fewest,
 * the first to come among equals.  The lock is held. */
static void
dispatch (struct bx_fair *f)
{
  while (f->running < f->max && f->first != NULL)
    {
      struct waiter *best = NULL;
      unsigned best_running = 0;
      for (struct waiter *w = f->first; w != NULL; w = w->next)
        {
          unsigned r = running_of (f, w->uid);
          if (r >= f->per_uid || (best != NULL && r >= best_running))
            continue;
          best = w;
          best_running = r;
        }
      if (best == NULL)
        return;
      unlink_waiter (f, best);
      take (f, best->uid);
      best->admitted = true;
      uint64_t one = 1;
      ssize_t ignored = write (best->wake_fd, &one, sizeof one);
      (void)ignored;
    }
}

/* Every waiting call that could run already runs (dispatch follows every change), so a free
 * run within the uid's share is this call's.  The lock is held. */
static bool
take_free (struct bx_fair *f, int64_t uid)
{
  if (f->running >= f->max || running_of (f, uid) >= f->per_uid)
    return false;
  take (f, uid);
  return true;
}

bool
bx_fair_try_enter (struct bx_fair *f, int64_t uid)
{
  if (f == NULL)
    return true;
  pthread_mutex_lock (&f->lock);
  bool taken = take_free (f, uid);
  pthread_mutex_unlock (&f->lock);
  return taken;
}

/* How many calls of UID wait; the lock is held. */
static unsigned
waiting_of (const struct bx_fair *f, int64_t uid)
{
  unsigned n = 0;
  for (const struct waiter *w = f->first; w != NULL; w = w->next)
    n += w->uid == uid;
  return n;
}

/* The one wait behind bx_fair_enter and bx_fair_queue: CANCEL's events (or its hang-up)
 * end it, as DEADLINE does.  BX_FAIR_FULL also when no eventfd could be made. */
static enum bx_fair_wait
await_turn (struct bx_fair *f, int64_t uid, struct pollfd cancel, int64_t deadline,
            unsigned max_waiting, unsigned per_uid_waiting)
{
  pthread_mutex_lock (&f->lock);
  if (f->closed)
    {
      pthread_mutex_unlock (&f->lock);
      return BX_FAIR_CLOSED;
    }
  if (take_free (f, uid))
    {
      pthread_mutex_unlock (&f->lock);
      return BX_FAIR_ADMITTED;
    }
  if (f->waiting >= max_waiting || waiting_of (f, uid) >= per_uid_waiting)
    {
      pthread_mutex_unlock (&f->lock);
      return BX_FAIR_FULL;
    }
  struct waiter w = { .uid = uid, .wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK) };
  if (w.wake_fd < 0)
    {
      pthread_mutex_unlock (&f->lock);
      return BX_FAIR_FULL;
    }
  if (f->last != NULL)
    f->last->next = &w;
  else
    f->first = &w;
  f->last = &w;
  f->waiting++;
  enum bx_fair_wait ended = BX_FAIR_ADMITTED;
  while (!w.admitted && ended == BX_FAIR_ADMITTED)
    {
      if (f->closed)
        {
          ended = BX_FAIR_CLOSED;
          break;
        }
      int left = bx_deadline_left (deadline);
      if (left == 0)
        {
          ended = BX_FAIR_TIMED_OUT;
          break;
        }
      pthread_mutex_unlock (&f->lock);
      struct pollfd p[2] = { { .fd = w.wake_fd, .events = POLLIN }, cancel };
      int r = poll (p, cancel.fd >= 0 ? 2 : 1, left);
      pthread_mutex_lock (&f->lock);
      if (r > 0 && cancel.fd >= 0 && (p[1].revents & (cancel.events | POLLHUP | POLLERR)) != 0)
        ended = BX_FAIR_HUNG_UP;
    }
  if (!w.admitted)
    unlink_waiter (f, &w);
  pthread_mutex_unlock (&f->lock);
  close (w.wake_fd);
  /* Admitted and ended at once: it goes on (a cancelled run is answered cancelled by the
   * module, a hung-up connection fails at its first read). */
  return w.admitted ? BX_FAIR_ADMITTED : ended;
}

bool
bx_fair_enter (struct bx_fair *f, int64_t uid, int cancel_fd)
{
  if (f == NULL)
    return true;
  struct pollfd cancel = { .fd = cancel_fd, .events = POLLIN };
  enum bx_fair_wait r = await_turn (f, uid, cancel, BX_NO_DEADLINE, UINT_MAX, UINT_MAX);
  if (r == BX_FAIR_FULL)
    {
      /* No eventfd (out of descriptors): this call runs outside its turn rather than not at
       * all. */
      pthread_mutex_lock (&f->lock);
      take (f, uid);
      pthread_mutex_unlock (&f->lock);
      return true;
    }
  return r == BX_FAIR_ADMITTED;
}

enum bx_fair_wait
bx_fair_queue (struct bx_fair *f, int64_t uid, int hangup_fd, int64_t deadline,
               unsigned max_waiting, unsigned per_uid_waiting)
{
  /* No events asked: poll reports the peer's close (POLLHUP) alone, not its request. */
  struct pollfd hangup = { .fd = hangup_fd, .events = 0 };
  return await_turn (f, uid, hangup, deadline, max_waiting, per_uid_waiting);
}

void
bx_fair_close (struct bx_fair *f)
{
  pthread_mutex_lock (&f->lock);
  f->closed = true;
  uint64_t one = 1;
  for (struct waiter *w = f->first; w != NULL; w = w->next)
    {
      ssize_t ignored = write (w->wake_fd, &one, sizeof one);
      (void)ignored;
    }
  pthread_mutex_unlock (&f->lock);
}

void
bx_fair_leave (struct bx_fair *f, int64_t uid)
{
  if (f == NULL)
    return;
  pthread_mutex_lock (&f->lock);
  give_back (f, uid);
  dispatch (f);
  pthread_mutex_unlock (&f->lock);
}

void
bx_fair_counts (struct bx_fair *f, unsigned *running, unsigned *waiting)
{
  pthread_mutex_lock (&f->lock);
  *running = f->running;
  *waiting = f->waiting;
  pthread_mutex_unlock (&f->lock);
}

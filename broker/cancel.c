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

#include "cancel.h"
#include "notify.h"
#include "run_spec.h"

/* The id of the eventfd that stops the thread; calls get ids from 1. */
#define STOP_ID 0

struct bx_canceller
{
  int epoll_fd;
  int stop_fd;
  pthread_t thread;
  pthread_mutex_t lock;
  struct bx_cancel_watch *watches; /* registered, newest first */
  uint64_t next_id;
  bool journal;
};

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
  epoll_ctl (c->epoll_fd, EPOLL_CTL_DEL, w->client_fd, NULL);
  w->registered = false;
}

static void *
watch_main (void *arg)
{
  struct bx_canceller *c = arg;
  for (;;)
    {
      struct epoll_event ev[16];
      int n = epoll_wait (c->epoll_fd, ev, 16, -1);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          bx_log (c->journal, LOG_ERR, NULL, "watching clients: %s", strerror (errno));
          return NULL;
        }
      pthread_mutex_lock (&c->lock);
      for (int i = 0; i < n; i++)
        {
          if (ev[i].data.u64 == STOP_ID)
            {
              pthread_mutex_unlock (&c->lock);
              return NULL;
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
      pthread_mutex_unlock (&c->lock);
    }
}

int
bx_canceller_start (bool journal, struct bx_canceller **out, bx_error *err)
{
  struct bx_canceller *c = bx_xzalloc (sizeof *c);
  c->journal = journal;
  c->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  c->stop_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  c->next_id = STOP_ID + 1;
  pthread_mutex_init (&c->lock, NULL);
  struct epoll_event ev = { .events = EPOLLIN, .data.u64 = STOP_ID };
  int r;
  if (c->epoll_fd < 0 || c->stop_fd < 0
      || epoll_ctl (c->epoll_fd, EPOLL_CTL_ADD, c->stop_fd, &ev) < 0)
    r = bx_error_set (err, errno, "cannot watch clients for cancellation");
  else if ((r = pthread_create (&c->thread, NULL, watch_main, c)) != 0)
    r = bx_error_set (err, r, "cannot start the thread that watches clients");
  if (r != 0)
    {
      if (c->epoll_fd >= 0)
        close (c->epoll_fd);
      if (c->stop_fd >= 0)
        close (c->stop_fd);
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
  uint64_t one = 1;
  while (write (c->stop_fd, &one, sizeof one) < 0 && errno == EINTR)
    ;
  pthread_join (c->thread, NULL);
  close (c->epoll_fd);
  close (c->stop_fd);
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
  pthread_mutex_lock (&c->lock);
  w->id = c->next_id++;
  /* Level-triggered: a client gone before this call is reported at once. */
  struct epoll_event ev = { .events = EPOLLRDHUP, .data.u64 = w->id };
  if (epoll_ctl (c->epoll_fd, EPOLL_CTL_ADD, client_fd, &ev) == 0)
    {
      w->registered = true;
      w->next = c->watches;
      c->watches = w;
    }
  pthread_mutex_unlock (&c->lock);
}

bool
bx_cancel_watch_end (struct bx_cancel_watch *w)
{
  struct bx_canceller *c = w->canceller;
  if (c == NULL)
    return false;
  pthread_mutex_lock (&c->lock);
  if (w->registered)
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

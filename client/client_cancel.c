/* SPDX-License-Identifier: Apache-2.0 */
/* Cancelling a call from another thread: see boxmaker/client.h and client_cancel.h.  shutdown()
 * rather than close(): the calling thread still owns the descriptor and is blocked in poll()
 * on it; shutdown wakes it (the socket reads end of file) and tells brokerd at once. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "bx/cleanup.h"

#include "client_cancel.h"

struct bx_client_cancel
{
  pthread_mutex_t lock;
  int fd; /* the call's connection, or -1 */
  bool requested;
};

struct bx_client_cancel *
bx_client_cancel_new (void)
{
  struct bx_client_cancel *c = bx_xmalloc (sizeof *c);
  pthread_mutex_init (&c->lock, NULL);
  c->fd = -1;
  c->requested = false;
  return c;
}

void
bx_client_cancel (struct bx_client_cancel *c)
{
  if (c == NULL)
    return;
  pthread_mutex_lock (&c->lock);
  c->requested = true;
  if (c->fd >= 0)
    shutdown (c->fd, SHUT_RDWR);
  pthread_mutex_unlock (&c->lock);
}

void
bx_client_cancel_free (struct bx_client_cancel *c)
{
  if (c == NULL)
    return;
  pthread_mutex_destroy (&c->lock);
  free (c);
}

int
bx_client_cancel_attach (struct bx_client_cancel *c, int fd)
{
  if (c == NULL)
    return 0;
  pthread_mutex_lock (&c->lock);
  c->fd = fd;
  bool requested = c->requested;
  if (requested)
    shutdown (fd, SHUT_RDWR);
  pthread_mutex_unlock (&c->lock);
  return requested ? -1 : 0;
}

void
bx_client_cancel_detach (struct bx_client_cancel *c)
{
  if (c == NULL)
    return;
  pthread_mutex_lock (&c->lock);
  c->fd = -1;
  pthread_mutex_unlock (&c->lock);
}

bool
bx_client_cancel_requested (struct bx_client_cancel *c)
{
  if (c == NULL)
    return false;
  pthread_mutex_lock (&c->lock);
  bool r = c->requested;
  pthread_mutex_unlock (&c->lock);
  return r;
}

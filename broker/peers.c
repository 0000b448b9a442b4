/* SPDX-License-Identifier: Apache-2.0 */
/* Connections per peer uid.  See peers.h. */

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "bx/cleanup.h"
#include "peers.h"

struct bx_peer_count
{
  uid_t uid;
  unsigned held;
};

int
bx_peer_cred (int fd, uid_t *uid, pid_t *pid)
{
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    return -1;
  if (len != sizeof cred)
    {
      errno = EPROTO;
      return -1;
    }
  *uid = cred.uid;
  *pid = cred.pid;
  return 0;
}

/* A handful of uids at most hold connections at once: a linear search is enough. */
static struct bx_peer_count *
find (struct bx_peers *peers, uid_t uid)
{
  for (size_t i = 0; i < peers->len; i++)
    if (peers->items[i].uid == uid)
      return &peers->items[i];
  return NULL;
}

bool
bx_peers_take (struct bx_peers *peers, uid_t uid, unsigned max)
{
  struct bx_peer_count *c = find (peers, uid);
  if (c != NULL && c->held >= max)
    return false;
  if (c == NULL)
    {
      if (peers->len == peers->cap)
        {
          peers->cap = peers->cap ? peers->cap * 2 : 8;
          peers->items = bx_xrealloc (peers->items, peers->cap * sizeof *peers->items);
        }
      c = &peers->items[peers->len++];
      c->uid = uid;
      c->held = 0;
    }
  c->held++;
  return true;
}

void
bx_peers_drop (struct bx_peers *peers, uid_t uid)
{
  struct bx_peer_count *c = find (peers, uid);
  if (c == NULL)
    return;
  if (--c->held == 0)
    *c = peers->items[--peers->len];
}

void
bx_peers_clear (struct bx_peers *peers)
{
  free (peers->items);
  peers->items = NULL;
  peers->len = peers->cap = 0;
}

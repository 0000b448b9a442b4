/* SPDX-License-Identifier: Apache-2.0 */
/* A connection's peer.  See peers.h. */

#include <errno.h>
#include <sys/socket.h>

#include "peers.h"

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

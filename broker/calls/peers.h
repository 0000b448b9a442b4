/* SPDX-License-Identifier: Apache-2.0 */
/* Who is at the other end of a connection: the kernel's word (SO_PEERCRED), never the
 * client's.  brokerd counts connections and runs per peer uid (fair.h). */
#ifndef BX_PEERS_H
#define BX_PEERS_H

#include <sys/types.h>

/* The uid and pid of the process at the other end of the connected Unix socket FD (from
 * the kernel, SO_PEERCRED); -1 with errno when the kernel cannot tell. */
int bx_peer_cred (int fd, uid_t *uid, pid_t *pid);

#endif

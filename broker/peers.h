/* SPDX-License-Identifier: Apache-2.0 */
/* Connections held per peer uid, so that one caller cannot take every connection brokerd
 * serves (the uid is the kernel's word, SO_PEERCRED, never the client's).  Not
 * thread-safe: the server calls it under its own lock. */
#ifndef BX_PEERS_H
#define BX_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct bx_peers
{
  struct bx_peer_count *items;
  size_t len, cap;
};

/* The uid and pid of the process at the other end of the connected Unix socket FD (from
 * the kernel, SO_PEERCRED); -1 with errno when the kernel cannot tell. */
int bx_peer_cred (int fd, uid_t *uid, pid_t *pid);
/* Counts one more connection for UID when it holds fewer than MAX; false (nothing counted)
 * when it already holds MAX. */
bool bx_peers_take (struct bx_peers *peers, uid_t uid, unsigned max);
/* Counts one connection of UID less. */
void bx_peers_drop (struct bx_peers *peers, uid_t uid);
void bx_peers_clear (struct bx_peers *peers);

#endif

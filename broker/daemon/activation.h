/* SPDX-License-Identifier: Apache-2.0 */
/* The listening socket systemd passed, held to its path.  systemd keeps that socket open
 * across brokerd's restarts, but the file at the config's socket path can go meanwhile (a
 * unit's RuntimeDirectory= removed at stop) or be replaced: brokerd would then listen where
 * no client can reach it.  So at start the path must still be the very socket passed, and
 * brokerd keeps a reference to that file, so that its own wake-up connections at stop reach
 * the socket whatever happens to the path later. */
#ifndef BX_BROKER_ACTIVATION_H
#define BX_BROKER_ACTIVATION_H

#include <stddef.h>

#include "bx/error.h"

/* Checks that PATH is the socket file LISTEN_FD is bound to (by device and inode, from the
 * kernel's socket diagnostics; where those are unavailable, that PATH is a socket), makes
 * LISTEN_FD blocking (systemd passes it non-blocking; brokerd's workers wait in accept()),
 * and writes to WAKE (SIZE bytes) a path that reaches the socket at stop: /proc/self/fd/N of
 * the file, held open for the life of the process.  0, or -1 with ERR naming the problem. */
int bx_activation_check (const char *path, int listen_fd, char *wake, size_t size, bx_error *err);

#endif

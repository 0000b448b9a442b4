/* SPDX-License-Identifier: Apache-2.0 */
/* The socket server: one request per connection, each served by one of a pool of worker
 * threads, leader and followers (server.c tells how): calls that do not block are taken one
 * after the other by one thread; a call that blocks hands accept() to another worker within
 * a millisecond.  Workers are started as needed, up to max_connections + 1, and leave after
 * 5 s without work, one always staying.
 *
 *   - A connection must deliver its whole request frame within request_timeout_ms (one
 *     deadline for the frame, not one per read): a client that stalls is cut off without
 *     holding anything else up.
 *   - Up to max_connections are served at once; past that a connection gets an `error`
 *     frame "brokerd is busy" at once and is closed, never left waiting.
 *   - A wrong protocol version, a bad frame, an id that is not 1 to 64 of [A-Za-z0-9_.-]:
 *     an `error` frame, and the connection closes.
 *   - A call whose grant asks for approval is handed to approvals.h, which sends the one
 *     pending_approval frame and the final answer; the worker is free at once.
 *
 * Signals: the caller blocks SIGTERM, SIGINT and SIGHUP in every thread; they are sources
 * on brokerd's sd-event loop (daemon.h), which the calling thread runs, so no handler and no
 * global flag exist.  On SIGTERM or SIGINT the server stops accepting, removes the socket
 * (unless systemd passed it), and waits up to grace_ms for running calls.  SIGHUP reopens
 * the audit log and re-reads the grants (bx_brokerd_reload). */
#ifndef BX_BROKER_SERVER_H
#define BX_BROKER_SERVER_H

#include "bx/error.h"

#include "approvals.h"
#include "audit.h"
#include "config.h"
#include "module_loader.h"

/* Binds CONFIG's socket with its mode and listens.  A live brokerd already on the path, or
 * something that is not a socket there, is a refusal; a stale socket file is replaced. */
int bx_server_listen (const struct bx_config *config, int *fd, bx_error *err);
/* The same for any socket path, with MODE (the admin socket too). */
int bx_server_listen_at (const char *path, unsigned mode, int *fd, bx_error *err);

/* Serves BROKERD's calls (daemon.h) on its listening socket, running its loop until SIGTERM
 * or SIGINT.  Then its approvals stop taking calls and answer the waiting ones
 * (bx_approvals_stop_waiting), and *GRACE_END gets the end of the grace period
 * (bx/deadline.h), which the approved calls share.  Returns 0 when every call finished and
 * every worker left, or the number of calls still running when the grace period ended (at
 * least 1): then BROKERD may still be in use and must not be freed.  -1 when it could not
 * start serving (logged). */
struct brokerd;
int bx_server_run (struct brokerd *brokerd, int64_t *grace_end);

#endif

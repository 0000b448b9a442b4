/* SPDX-License-Identifier: Apache-2.0 */
/* The admin socket: where the owners list, watch, approve and decline waiting calls
 * (docs/protocol.md, "The admin socket").
 *
 * It is a socket of its own, with its own path and group (admin_socket, admin_group), so
 * that an agent that may reach brokerd's socket cannot approve its own calls.  brokerd
 * refuses to start when the callers' socket has the admin group, and refuses a connection
 * whose peer (SO_PEERCRED, SO_PEERGROUPS) is neither root nor in the admin group, whatever
 * the socket file's mode says, and one whose uid a sandbox may run as (brokerd's own when
 * it is not root, the overflow uid) even in the admin group.  One request per connection;
 * `watch` keeps it open. */
#ifndef BX_BROKER_ADMIN_H
#define BX_BROKER_ADMIN_H

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "bx/error.h"

#include "approvals.h"
#include "config.h"

struct bx_admin;

/* Binds CONFIG's admin_socket (mode 0660, group admin_group) and accepts on it as a source
 * of LOOP (brokerd's).  Each owner's connection is a source of LOOP too, read and written
 * without blocking: no thread of its own, and a watcher that stops reading is dropped once
 * a frame's worth of output waits for it (logged).  Refuses when the callers' socket
 * (already bound) has the admin group. */
int bx_admin_start (const struct bx_config *config, sd_event *loop, struct bx_approvals *approvals,
                    struct bx_admin **out, bx_error *err);

/* Stops accepting and removes the socket, on the loop's thread; connections still open end
 * as approvals stop (bx_approvals_stop runs the loop until they did). */
void bx_admin_stop (struct bx_admin *admin);
/* Frees a stopped ADMIN, closing the connections still open, before the approvals go. */
void bx_admin_free (struct bx_admin *admin);

#endif

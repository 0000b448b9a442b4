/* SPDX-License-Identifier: Apache-2.0 */
/* The live config: what calls decide against, replaced as a whole on `systemctl reload`
 * (SIGHUP) without dropping running calls.
 *
 * A call holds the config it started with until it ends (its decision points into the
 * grants), so a reload never changes a call half way; the old config is freed when its last
 * call ends.  A reload re-reads the file and takes it only when it checks and changes
 * nothing but the grants: every other key (socket, home, audit, runtime, runtimes, limits) is
 * read at start only, and so are the runtimes grants name (runtimes.h), and a file that changes one
 * of them stays out, with a message saying which. */
#ifndef BX_BROKER_RELOAD_H
#define BX_BROKER_RELOAD_H

#include "bx/error.h"

#include "config.h"
#include "runtimes.h"

struct bx_live_config;
struct bx_config_hold; /* one call's reference */

/* Takes CONFIG (read from CONFIG->file). */
struct bx_live_config *bx_live_config_new (struct bx_config *config);
/* The config serving now, held until bx_live_config_put. */
struct bx_config_hold *bx_live_config_get (struct bx_live_config *live,
                                           const struct bx_config **config);
void bx_live_config_put (struct bx_live_config *live, struct bx_config_hold *hold);
/* Re-reads the file.  0: the new grants serve the next calls; -1 and ERR: the running config
 * stays. */
int bx_live_config_reload (struct bx_live_config *live, bx_error *err);
/* A reloaded config must keep clear of the RUNTIMES' protected paths (protect.h), and each
 * grant's own root must pass its runtime's check, as for the first one. */
void bx_live_config_protect (struct bx_live_config *live, const struct bx_runtimes *runtimes);
/* Frees what nobody holds; the caller makes sure no call is running. */
void bx_live_config_free (struct bx_live_config *live);

/* Which key other than the grants differs between A and B (a name for a message), or NULL
 * when none does. */
const char *bx_config_restart_key (const struct bx_config *a, const struct bx_config *b);

#endif

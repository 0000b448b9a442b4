/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime modules one brokerd runs calls in: the default (config key `runtime`) and each
 * runtime grants choose by name (`runtimes`, or a module a grant's `runtime` names), each
 * loaded once and created once with its own options at start.  A grant's calls run in its
 * own runtime; a reload keeps the set, which only a restart changes (reload.c).
 *
 *   bx_runtimes_start     load and create every one, with the config's place on failure
 *   bx_runtimes_of_grant  the module a grant's calls run in
 *   bx_runtimes_check     every module's protected paths and each grant's own root against
 *                         its runtime (protect.h, grant_root.h) */
#ifndef BX_BROKER_RUNTIMES_H
#define BX_BROKER_RUNTIMES_H

#include <stddef.h>

#include "bx/error.h"

#include "config.h"
#include "module_loader.h"

struct bx_runtimes
{
  struct bx_module **modules; /* [0] the default; [K] config->runtimes[K - 1] */
  size_t count;
};

/* Loads and creates CONFIG's runtimes with HOME and LOG; every module file once (the same
 * file named twice, by name and by path, is refused).  -1 with ERR placed at the config's
 * line at fault; what was made is gone again. */
int bx_runtimes_start (const struct bx_config *config, const char *runtimedir, bx_module_log_fn log,
                       void *log_ctx, struct bx_runtimes **out, bx_error *err);
/* The module GRANT's calls run in; the default for NULL (a denied call). */
struct bx_module *bx_runtimes_of_grant (const struct bx_runtimes *runtimes,
                                        const struct bx_grant *grant);
/* bx_protect_check over every module, then bx_grant_roots_check. */
int bx_runtimes_check (const struct bx_config *config, const struct bx_runtimes *runtimes,
                       bx_error *err);
/* Destroys every module (bx_module_destroy) and frees RUNTIMES.  Safe on NULL. */
void bx_runtimes_free (struct bx_runtimes *runtimes);

#endif

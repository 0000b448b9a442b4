/* SPDX-License-Identifier: Apache-2.0 */
/* A module's protected paths (ABI 1.1, bx_runtime.protected_paths) against the grants:
 * brokerd refuses to start when a grant folder holds one of them or lies inside one, since
 * a sandbox could then read or replace the module's own files (its rootfs, its helpers). */
#ifndef BX_BROKER_PROTECT_H
#define BX_BROKER_PROTECT_H

#include "bx/error.h"

#include "config.h"
#include "module_loader.h"

/* 0, or -1 with an error naming the first grant folder and protected path that meet. */
int bx_protect_check (const struct bx_config *config, struct bx_module *module, bx_error *err);

#endif

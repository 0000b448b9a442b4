/* SPDX-License-Identifier: Apache-2.0 */
/* The first step of every module's check_root: which kind of a grant's own root the key
 * names.  podman.so runs a grant's "image", bwrap.so and gvisor.so a grant's "rootfs"; each
 * refuses the other kind by saying where it runs, and anything else as not its own. */
#ifndef BX_RUNTIME_CHECK_ROOT_H
#define BX_RUNTIME_CHECK_ROOT_H

#include <boxmaker/runtime.h>

/* 0 when KEY is the kind MODULE ("podman", "bwrap" or "gvisor") runs; else the refusal in
 * SINK and -1. */
int bx_runtime_root_key (const struct bx_host *host, const char *module, const char *key,
                         bx_error_sink *sink);

/* The sentence refusing a root of MODULE's kind that is not of its form. */
const char *bx_runtime_root_only (const char *module);

#endif

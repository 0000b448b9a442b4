/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy's lists (--allow hosts, --allow-private ranges) as its one
 * comma-separated argument each.  brokerd's config refuses a ',' inside a host or range. */
#ifndef BX_RUNTIME_HOST_LIST_H
#define BX_RUNTIME_HOST_LIST_H

#include <stddef.h>

#include <boxmaker/runtime.h>

/* The COUNT ITEMS joined with ',' (malloc'd; "" for none). */
char *bx_runtime_join (const char *const *items, size_t count);

/* The spec's egress hosts joined with ',' (malloc'd; "" for none). */
char *bx_runtime_join_hosts (const struct bx_host *host, const bx_run_spec *spec);

/* The grant's allow_private ranges (ABI 1.1) joined with ',' (malloc'd), or NULL for none. */
char *bx_runtime_join_private (const struct bx_host *host, const bx_run_spec *spec);

#endif

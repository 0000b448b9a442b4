/* SPDX-License-Identifier: Apache-2.0 */
/* The content digest of a read-only root: see rootfs_digest.c. */
#ifndef BX_RUNTIME_ROOTFS_DIGEST_H
#define BX_RUNTIME_ROOTFS_DIGEST_H

#include <stdbool.h>

#include "bx/error.h"

#define BX_RUNTIME_DIGEST_LEN 71 /* "sha256:" and 64 hex digits */

/* The content digest of the root ROOT; 0, or -1 with *ERR.  OWNED:
 * also refuse an entry anyone but root could change. */
int bx_runtime_rootfs_digest (const char *root, bool owned, char digest[BX_RUNTIME_DIGEST_LEN + 1],
                              bx_error *err);

#endif

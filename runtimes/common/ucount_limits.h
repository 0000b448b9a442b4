/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's per-uid limits of /proc/sys/user, and a sandbox's share of them: one list for
 * bwrap.so (which writes them into each sandbox's own user namespace) and podman.so (whose
 * OCI hook writes them into each container's). */
#ifndef BX_UCOUNT_LIMITS_H
#define BX_UCOUNT_LIMITS_H

#include <stdint.h>

#define BX_UCOUNT_SYSCTLS 12
/* The /proc/sys/user prefix of every path below. */
#define BX_UCOUNT_SYSCTL_DIR "/proc/sys/user/"

extern const char *const bx_ucount_sysctls[BX_UCOUNT_SYSCTLS];

/* Each sandbox's share when SANDBOXES of them run at once: the host's limit divided by
 * SANDBOXES plus one, so that all together leave a share for everything else of the uid
 * (at least 1, and at least a few namespaces of each kind).  0: the kernel has no such
 * limit, or it cannot be read; left as it is. */
void bx_ucount_sysctl_shares (uint64_t sandboxes, uint64_t share[BX_UCOUNT_SYSCTLS]);

#endif

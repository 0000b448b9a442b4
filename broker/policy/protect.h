/* SPDX-License-Identifier: Apache-2.0 */
/* What brokerd loads, runs or trusts, against the folders grants open.  brokerd refuses a
 * config (at --check-config, at start and at each reload) where a grant folder holds or lies
 * inside:
 * - for grants whose sandboxes write their folders (write_file, or shell not `writable:
 *   false`): the runtimes folder modules are loaded from by name, every loaded module's file, the
 *   config file and brokerd's own program, which the next start loads or runs;
 * - for every grant: brokerd's home, the audit log, the sockets (callers', admin, metrics)
 *   and the paths each runtime module protects (ABI 1.1 protected_paths: its rootfs, its
 *   helpers, podman's storage, seccomp profile and toolkit), which a sandbox could read,
 *   forge or replace.
 * Paths are compared as the kernel resolves them when the check runs (every symbolic link
 * and `..` in the part that exists), and by device and inode along each path, so a link or
 * a bind mount to one of them is found too; what does not exist yet is compared as
 * written below what does. */
#ifndef BX_BROKER_PROTECT_H
#define BX_BROKER_PROTECT_H

#include "bx/error.h"

#include "config.h"
#include "module_loader.h"

/* 0, or -1 with one line per grant path at fault, each FILE:LINE:COLUMN of the path, what it
 * holds or lies inside, and why. */
int bx_protect_check (const struct bx_config *config, struct bx_module *const *modules,
                      size_t n_modules, bx_error *err);

enum bx_meeting
{
  BX_MEETING_NONE,
  BX_MEETING_HOLDS,  /* the folder is the path or lies above it */
  BX_MEETING_INSIDE, /* the folder lies below the path */
};

/* How the folder FOLDER meets PATH, both resolved as bx_protect_check resolves them. */
enum bx_meeting bx_protect_meeting (const char *folder, const char *path);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* What bwrap.so and gvisor.so ask of a read-only root they run toolkit from, and of the
 * folders they keep their state in, and how they read a path option. */
#ifndef BX_RUNTIME_ROOTFS_H
#define BX_RUNTIME_ROOTFS_H

#include <stddef.h>
#include <sys/types.h>

#include <boxmaker/runtime.h>

#include "bx/error.h"

/* Option NAME as an absolute path (FALLBACK when absent, which may be NULL).  0, or -1 with
 * the error in SINK. */
int bx_runtime_read_path (const struct bx_host *host, const bx_options *options, const char *name,
                          const char *fallback, const char **out, bx_error_sink *sink);

/* The root must be a folder that only root can change (a sandbox, or anyone but root, able
 * to write it could put a toolkit of its own there), holding bin/toolkit.  0, or -1 with the
 * error (naming option rootfs) in SINK. */
int bx_runtime_check_rootfs (const struct bx_host *host, const char *rootfs, bx_error_sink *sink);

/* ROOTFS's top-level folders in name order, NULL-terminated, but those every sandbox gets
 * of its own (proc, dev, tmp, sys, run) and links (a link would be followed on the host when
 * bound); *COUNT gets their number.  NULL with the error in SINK when ROOTFS cannot be read.
 * Free with bx_runtime_rootfs_folders_free. */
char **bx_runtime_rootfs_folders (const struct bx_host *host, const char *rootfs, size_t *count,
                                  bx_error_sink *sink);
void bx_runtime_rootfs_folders_free (char **folders);

/* PATH as a folder of brokerd's user that no one else can write (made with MODE when
 * missing).  0, or -1 with *ERR. */
int bx_runtime_own_folder (const char *path, mode_t mode, bx_error *err);

#endif

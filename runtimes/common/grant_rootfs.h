/* SPDX-License-Identifier: Apache-2.0 */
/* A grant's own root (config key rootfs, host spec_rootfs) under bwrap.so and gvisor.so:
 * check_root's check of its digest, the roots it accepted, and the steps that make it a
 * sandbox's root.  See grant_rootfs.c. */
#ifndef BX_RUNTIME_GRANT_ROOTFS_H
#define BX_RUNTIME_GRANT_ROOTFS_H

#include <stddef.h>

#include <boxmaker/runtime.h>

#include "bx/contract.h"
#include "bx/error.h"

/* The roots check_root accepted, so a call runs only in one whose digest was checked. */
struct bx_runtime_roots;
struct bx_runtime_roots *bx_runtime_roots_new (void);
void bx_runtime_roots_free (struct bx_runtime_roots *roots);

/* check_root for MODULE ("bwrap" or "gvisor"): KEY "rootfs" with ROOT /PATH@sha256:<64 hex>
 * is checked (a folder of root's alone, holding what its digest says) and remembered in
 * ROOTS; any other key is refused with MODULE's sentence (check_root.h).  0, or -1 with the
 * reason in SINK. */
int bx_runtime_roots_check (const struct bx_host *host, struct bx_runtime_roots *roots,
                            const char *module, const char *key, const char *root,
                            bx_error_sink *sink);

/* The folder of ROOT, /PATH@sha256:..., when check_root accepted it and it is still the
 * same folder (not one moved into its place since); NULL otherwise (malloc'd). */
char *bx_runtime_roots_folder (struct bx_runtime_roots *roots, const char *root);

/* One step that makes a grant's own root a sandbox's root, in order. */
enum bx_runtime_root_kind
{
  BX_RUNTIME_ROOT_BIND, /* a folder or file of the root, SOURCE, bound read-only at DEST */
  BX_RUNTIME_ROOT_LINK, /* a link of the root made again at DEST, SOURCE its target */
  BX_RUNTIME_ROOT_DIR,  /* a folder made at DEST on the way to a granted folder */
};

struct bx_runtime_root_step
{
  enum bx_runtime_root_kind kind;
  char *source; /* NULL for a folder */
  char *dest;
};

/* The steps that make the folder ROOT the sandbox's root, with the folders on the way to
 * each of the COUNT granted folders MOUNTS (paths inside the sandbox) made in the sandbox's
 * own tmpfs rather than bound (a read-only bind could not hold their mount points); /proc,
 * /dev, /tmp, /sys and /run are the module's.  0 with *STEPS (free with
 * bx_runtime_root_steps_free), or -1 with *ERR. */
int bx_runtime_root_steps (const char *root, const char *const *mounts, size_t count,
                           struct bx_runtime_root_step **steps, size_t *step_count, bx_error *err);
void bx_runtime_root_steps_free (struct bx_runtime_root_step *steps, size_t count);

/* Toolkit appears in a grant's own root at BX_RUNTIME_INJECTED_TOOLKIT (bx/contract.h):
 * read-only, the module's root's bin/toolkit, as podman.so mounts it into a grant's image. */
/* The PATH of a call in a grant's own root, Debian's default. */
#define BX_RUNTIME_ROOT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#endif

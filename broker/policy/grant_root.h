/* SPDX-License-Identifier: Apache-2.0 */
/* A grant's own root, what its calls but http_fetch run in: `image` (an image pinned by
 * digest, podman.so) or `rootfs` (a root folder pinned by its content digest, bwrap.so).
 * config.c parses `image`; this file parses `rootfs`, and has the runtime module check
 * every grant's root when brokerd starts, at each reload and for --check-config. */
#ifndef BX_BROKER_GRANT_ROOT_H
#define BX_BROKER_GRANT_ROOT_H

#include <stdbool.h>

#include <yaml.h>

#include "bx/error.h"

#include "config.h"
#include "runtimes.h"
#include "yaml_walk.h"

/* The value NODE of a grant's `rootfs` key into G->rootfs: /PATH@sha256:<64 hex digits>,
 * PATH absolute and clean.  HAS_IMAGE: the grant names an image too, which is refused. */
void bx_grant_rootfs_parse (struct bx_walk *w, yaml_node_t *node, bool has_image,
                            struct bx_grant *g);

/* 0 when no grant folder holds or lies in a grant's rootfs (a sandbox could change the root
 * other calls run in) and each grant's runtime accepts its image or rootfs (check_root); else
 * -1 with one line per grant at fault, each starting FILE:LINE:COLUMN of its key's value. */
int bx_grant_roots_check (const struct bx_config *config, const struct bx_runtimes *runtimes,
                          bx_error *err);

#endif

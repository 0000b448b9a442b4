/* SPDX-License-Identifier: Apache-2.0 */
/* Loading a runtime module and calling it: the host side of boxmaker/runtime.h.
 *
 *   bx_module_load      dlopen by name (in the runtimes folder) or absolute path, find the
 *                       entry, check the table (magic, major, minor, size, functions)
 *   bx_module_create    hand it its options and the host services
 *   bx_module_run       run one spec, collecting the output in host-owned memory
 *
 * Modules are never unloaded (dlclose in a threaded daemon is unsafe). */
#ifndef BX_BROKER_MODULE_LOADER_H
#define BX_BROKER_MODULE_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <boxmaker/runtime.h>

#include "bx/error.h"

struct bx_module;

/* Where a module's log lines go; brokerd writes them to its standard error with the module's
 * name, tests capture them.  LINE has no newline. */
typedef void (*bx_module_log_fn) (void *ctx, const char *module, enum bx_log_level level,
                                  const char *line);

/* NAME_OR_PATH is an absolute path to a .so, or a bare name looked up as
 * <RUNTIMEDIR>/<name>.so.  Every refusal is one line naming the file and the reason. */
int bx_module_load (const char *name_or_path, const char *runtimedir, struct bx_module **out,
                    bx_error *err);
/* Calls the module's create() with OPTIONS (may be NULL: no options) and HOME. */
int bx_module_create (struct bx_module *module, const bx_options *options, const char *home,
                      bx_module_log_fn log, void *log_ctx, bx_error *err);
const char *bx_module_name (const struct bx_module *module);
const char *bx_module_path (const struct bx_module *module);
/* The runtimes folder the module was looked up in by name, or NULL when given by path. */
const char *bx_module_dir (const struct bx_module *module);
/* The ABI version the module was built with. */
void bx_module_version (const struct bx_module *module, unsigned *major, unsigned *minor);
/* Whether the module declares itself no sandbox (BX_RUNTIME_NOT_A_SANDBOX, since 1.3); false
 * for a module built before 1.3, whose table has no flags. */
bool bx_module_not_a_sandbox (const struct bx_module *module);

/* What a run produced, in memory the host owns. */
struct bx_run_output
{
  char *content; /* NUL-terminated after len bytes; may hold any bytes */
  size_t len;
  bool truncated;
  json_t *egress; /* the egress records the module passed, whatever the status */
  bool refused;   /* the tool refused: the content is its reason */
};

/* Runs SPEC.  On BX_RUN_OK, *out holds the output; its egress records in any case (free
 * with bx_run_output_clear).  Otherwise
 * *sentence is the module's fixed sentence (never NULL: a module that gives none gets a
 * generic one). */
enum bx_run_status bx_module_run (struct bx_module *module, const bx_run_spec *spec,
                                  struct bx_run_output *out, const char **sentence);
void bx_run_output_clear (struct bx_run_output *out);

/* The module's protected paths (ABI 1.1): a NULL-terminated list, or NULL for a module that
 * names none (every 1.0 module). */
const char *const *bx_module_protected_paths (struct bx_module *module);

/* The module's check_root for a grant's KEY ("image" or "rootfs") naming ROOT: 0, or -1 with
 * the module's reason.  A module without check_root passes an image (ABI 1.1 lets it answer
 * each call BX_RUN_UNAVAILABLE instead) and fails a rootfs, which it might not know. */
int bx_module_check_root (struct bx_module *module, const char *key, const char *root,
                          bx_error *err);

/* Calls destroy() (when create() succeeded) and frees MODULE; the shared object itself stays
 * loaded.  Safe on NULL. */
void bx_module_destroy (struct bx_module *module);

#endif

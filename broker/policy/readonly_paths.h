/* SPDX-License-Identifier: Apache-2.0 */
/* Protected paths (config key `readonly`, docs/config.md "Protected paths"): subpaths of a
 * writable granted folder that the sandbox sees read-only, so that what it writes cannot
 * run on the host later (a git hook, a git config's core.hooksPath, a shell start-up file).
 *
 * When a call starts, each subpath is walked from the folder one component at a time
 * without following a symbolic link.  What exists becomes a read-only mount over the
 * writable folder; each folder on the way becomes a writable mount of itself, so that the
 * sandbox can neither rename nor remove it to put a folder of its own in its place (the
 * kernel refuses to move a mount point).  A regular file on the way (a `.git` file of a
 * linked worktree, which names the git folder) is protected instead of what lies past it.
 * Where a subpath stops existing, brokerd puts an empty placeholder of its own in place of
 * the first missing component and protects that (placeholders.h), so the sandbox cannot
 * create what git or a shell would run; a placeholder found on the way (this call's or
 * another running call's) is protected whole.  A symbolic link anywhere on the way refuses
 * the call: the sandbox may have planted it, and the host would follow it. */
#ifndef BX_BROKER_READONLY_PATHS_H
#define BX_BROKER_READONLY_PATHS_H

#include <stdbool.h>
#include <stddef.h>

#include "placeholders.h"

/* The subpaths protected when a grant says nothing: git's hooks and config, HEAD, and what
 * runs at the owner's next login or command when the folder is a home folder (readonly_paths.c). */
extern const char *const bx_protect_defaults[];
extern const size_t bx_protect_default_count;

/* 0 when SUBPATH is a relative clean path (no empty, '.' or '..' component, no leading or
 * trailing '/', no ':', ',' or control character); else -1 with *ERR saying why not. */
int bx_protect_subpath_check (const char *subpath, bx_error *err);

struct bx_protect_mount
{
  char *path;
  bool writable;
};

struct bx_protect_list
{
  struct bx_protect_mount *mounts;
  size_t count;
};

/* Appends to LIST the mounts protecting SUBPATHS inside FOLDER (an absolute clean folder),
 * parents before what lies in them, and to REFS the placeholders they use, which the caller
 * releases when the call is over (also after a failure).  0, or -1 with *ERR naming the
 * path. */
int bx_protect_folder (const char *folder, const char *const *subpaths, size_t count,
                       struct bx_protect_list *list, struct bx_placeholder_refs *refs,
                       bx_error *err);
void bx_protect_list_clear (struct bx_protect_list *list);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Placeholders for protected paths that do not exist (readonly_paths.h).
 *
 * A protected path that is missing when a call starts would be the sandbox's to create: a
 * `.git` with a config naming a command, a `.bashrc`, which the owner's next git command or
 * shell runs on the host.  So brokerd creates the first missing component itself, empty,
 * owned by its own user (root) and not writable (folders 0555, files 0444), relative to the
 * descriptor of the folder already walked, and the call mounts it read-only like a path
 * that was there.  When the call ends brokerd removes it again, if it is still the same
 * inode and still empty.  The file placeholders of one folder are names of one empty file
 * (placeholders.c), so a call adds and removes names, not inodes.
 *
 * Two calls in one folder share a placeholder: removing a mount point on the host would
 * detach it in the other call's sandbox and leave that call unprotected.  So brokerd keeps
 * one table of the live placeholders, keyed by device and inode, with a count of the calls
 * holding each; the last call to let go removes it.
 *
 * Each placeholder is also recorded, a line when it is made and one when it goes, in a file
 * in a folder of this brokerd's own in HOME/placeholders, made with the first placeholder and
 * kept until brokerd stops, locked (flock) by brokerd, so that a brokerd killed in the middle of a
 * call leaves a list: the next brokerd to start removes those that are still there, empty, its
 * user's and the same inode (bx_placeholders_start), unless one is still mounted in a sandbox of
 * the dead brokerd that runs on (its record then stays for the next start).  A folder whose lock is
 * held is a live brokerd's sharing the home: nothing of it is touched. */
#ifndef BX_BROKER_PLACEHOLDERS_H
#define BX_BROKER_PLACEHOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct bx_placeholder;

/* The placeholders one call holds. */
struct bx_placeholder_refs
{
  struct bx_placeholder **held;
  size_t count;
};

/* Looks at NAME in DIR without following a link, into *ST.  1 when it is a live placeholder
 * (REFS now holds it once more), 0 when it is anything else, -1 with errno (ENOENT: there is
 * nothing). */
int bx_placeholder_find (struct bx_placeholder_refs *refs, int dir, const char *name,
                         struct stat *st);

/* Creates NAME in DIR (PATH is its full path, for the records and the log): an empty folder
 * (FOLDER) or file, and holds it in REFS.  0, or -1 with errno (EEXIST: something was put
 * there since the look; look again). */
int bx_placeholder_make (struct bx_placeholder_refs *refs, int dir, const char *name,
                         const char *path, bool folder);

/* Lets go of every placeholder REFS holds; the last call holding one removes it when it is
 * still the same and empty.  REFS is empty afterwards. */
void bx_placeholder_release (struct bx_placeholder_refs *refs);

/* Records placeholders in HOME/placeholders from now on, and removes those a brokerd killed
 * in the middle of a call left (still there, empty, owned by brokerd's user, the same inode),
 * but never a live brokerd's; each one removed or left is logged (bx_log).  Call once before
 * the first call runs. */
void bx_placeholders_start (const char *home);

/* brokerd stops: its folder of records goes, unless a placeholder still lives (a call that
 * did not end), whose record then stays for the next start. */
void bx_placeholders_stop (void);

#endif

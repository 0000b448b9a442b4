/* SPDX-License-Identifier: Apache-2.0 */
/* Whose leftovers are whose: everything a module's instance leaves on the host (cgroups,
 * folders, sandboxes) carries the instance's name, "<brokerd pid>-<start time>", so that a
 * later brokerd removes what a dead one left and never what a live one uses (a pid alone
 * could have been reused since). */
#ifndef BX_RUNTIME_INSTANCE_H
#define BX_RUNTIME_INSTANCE_H

#include <stdbool.h>

/* This process's name, "<pid>-<start time>" (newly allocated). */
char *bx_runtime_instance_name (void);
/* Whether NAME is the name of a process that still runs.  A NAME not of that form is taken
 * for alive: it is not ours to remove. */
bool bx_runtime_instance_alive (const char *name);

#endif

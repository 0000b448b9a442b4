/* SPDX-License-Identifier: Apache-2.0 */
/* A path opened without following a symbolic link anywhere on the way.  A sandbox may write
 * into a granted folder between two calls; were a component of a grant's path a link it put
 * there, a mount by path would mount wherever the link points. */
#ifndef BX_RUNTIME_OPEN_NOFOLLOW_H
#define BX_RUNTIME_OPEN_NOFOLLOW_H

/* An O_PATH descriptor (close-on-exec) of the absolute PATH, no component of which may be a
 * symbolic link; -1 with errno: ELOOP for a link, EINVAL for a relative path, ENOENT, ... */
int bx_runtime_open_nofollow (const char *path);

#endif

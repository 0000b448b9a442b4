/* SPDX-License-Identifier: Apache-2.0 */
/* A mount source, checked when the call starts.  Policy judged the grant's path as text;
 * what podman binds is what the kernel resolves.  So every component is walked with
 * O_NOFOLLOW from /, and a symbolic link anywhere on the way refuses the call, whoever
 * planted it.  What remains racy: between this walk and podman's own resolution a link
 * could be swapped in by whoever can write a folder on the way.  brokerd's config refuses
 * every grant inside a folder a sandbox can write, so only the host's own users can, and
 * they could change the grant itself anyway. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "podman.h"

int
bx_podman_check_source (const char *path)
{
  if (path == NULL || path[0] != '/')
    {
      errno = EINVAL;
      return -1;
    }
  int dir = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return -1;
  const char *p = path;
  int r = 0;
  while (*p != '\0')
    {
      while (*p == '/')
        p++;
      size_t len = strcspn (p, "/");
      if (len == 0)
        break;
      char *part = bx_xasprintf ("%.*s", (int)len, p);
      int next = openat (dir, part, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      int saved = errno;
      if (next >= 0 && fstat (next, &st) < 0)
        {
          saved = errno;
          close (next);
          next = -1;
        }
      free (part);
      if (next < 0)
        {
          /* Missing: podman says so itself; nothing here could be followed. */
          r = saved == ENOENT ? 0 : -1;
          errno = saved;
          break;
        }
      close (dir);
      dir = next;
      if (S_ISLNK (st.st_mode))
        {
          errno = ELOOP;
          r = -1;
          break;
        }
      p += len;
      if (!S_ISDIR (st.st_mode))
        {
          /* A regular file may be the source itself (a protected file read-only over its
           * grant, the toolkit mounted into a grant's image), never a folder on the way. */
          while (*p == '/')
            p++;
          if (*p == '\0' && S_ISREG (st.st_mode))
            break;
          errno = ENOTDIR;
          r = -1;
          break;
        }
    }
  int saved = errno;
  close (dir);
  errno = saved;
  return r;
}

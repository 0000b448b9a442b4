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
#include <sys/stat.h>
#include <unistd.h>

#include "open_nofollow.h"
#include "podman.h"

int
bx_podman_check_source (const char *path)
{
  int fd = bx_runtime_open_nofollow (path);
  if (fd < 0)
    /* Missing: podman says so itself; nothing here could be followed. */
    return errno == ENOENT ? 0 : -1;
  struct stat st;
  int r = fstat (fd, &st);
  int saved = errno;
  close (fd);
  errno = saved;
  if (r < 0)
    return -1;
  /* A regular file may be the source itself (a protected file read-only over its grant, the
   * toolkit mounted into a grant's image), never a folder on the way. */
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
    {
      errno = ENOTDIR;
      return -1;
    }
  return 0;
}

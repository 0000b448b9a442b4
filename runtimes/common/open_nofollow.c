/* SPDX-License-Identifier: Apache-2.0 */
/* Paths opened without following symbolic links: see open_nofollow.h.  bubblewrap binds the
 * descriptor (--bind-fd), so the folder mounted is the one opened here. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "open_nofollow.h"

/* The same walk by hand, one component at a time with O_NOFOLLOW, for kernels without
 * openat2 (before 5.6) or a seccomp filter refusing it. */
static int
walk_nofollow (const char *path)
{
  int dir = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return -1;
  const char *p = path;
  while (*p != '\0')
    {
      while (*p == '/')
        p++;
      size_t len = strcspn (p, "/");
      if (len == 0)
        break;
      char name[256];
      if (len >= sizeof name || (len == 2 && p[0] == '.' && p[1] == '.'))
        {
          close (dir);
          errno = len >= sizeof name ? ENAMETOOLONG : EINVAL;
          return -1;
        }
      memcpy (name, p, len);
      name[len] = '\0';
      int next = openat (dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      int saved = errno;
      close (dir);
      if (next < 0)
        {
          errno = saved;
          return -1;
        }
      struct stat st;
      if (fstat (next, &st) == 0 && S_ISLNK (st.st_mode))
        {
          close (next);
          errno = ELOOP;
          return -1;
        }
      dir = next;
      p += len;
    }
  return dir;
}

int
bx_runtime_open_nofollow (const char *path)
{
  if (path == NULL || path[0] != '/')
    {
      errno = EINVAL;
      return -1;
    }
  struct open_how how = {
    .flags = O_PATH | O_CLOEXEC,
    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  long fd = syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd >= 0)
    return (int)fd;
  if (errno != ENOSYS && errno != EPERM)
    return -1;
  return walk_nofollow (path);
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "bx/fd.h"

void
bx_fd_close (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

int
bx_fd_above_stdio (int fd)
{
  if (fd < 0 || fd > 2)
    return fd;
  int moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  int saved = errno;
  close (fd);
  errno = saved;
  return moved;
}

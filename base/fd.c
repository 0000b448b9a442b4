/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
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

int
bx_accept_retrying (int listen_fd)
{
  for (;;)
    {
      int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);
      if (fd >= 0)
        return fd;
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        {
          struct timespec ts = { 0, 50 * 1000 * 1000 };
          nanosleep (&ts, NULL);
          continue;
        }
      return -1;
    }
}

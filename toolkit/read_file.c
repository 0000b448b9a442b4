/* SPDX-License-Identifier: Apache-2.0 */
/* read_file: the content of a file, byte for byte, when it is UTF-8 text of at most 1 MiB. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/utf8.h"
#include "tools.h"

static int
refuse (int out_fd, const char *path, const char *reason)
{
  return bx_toolkit_refuse (out_fd, "read_file", path, reason);
}

static int
refuse_errno (int out_fd, const char *path, int errnum)
{
  char buf[128];
  return refuse (out_fd, path, bx_toolkit_reason (errnum, buf, sizeof buf));
}

int
bx_toolkit_read_file (const struct bx_tool_args *args, const struct bx_toolkit_env *env, int out_fd)
{
  (void)env;
  const char *path = args->path;
  /* O_NONBLOCK: opening a FIFO nobody writes to would otherwise wait for ever.  Only
   * regular files are read (below), where the flag changes nothing. */
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return refuse_errno (out_fd, path, errno);

  struct stat st;
  if (fstat (fd, &st) < 0)
    return refuse_errno (out_fd, path, errno);
  if (S_ISDIR (st.st_mode))
    return refuse_errno (out_fd, path, EISDIR);
  /* A FIFO, socket or device may never end or never answer (/dev/zero, a pty). */
  if (!S_ISREG (st.st_mode))
    return refuse (out_fd, path, "not a regular file");

  /* Read one byte past the limit rather than trust st_size: /proc files say 0, and a file
   * may grow while it is read. */
  const size_t cap = BX_TOOLKIT_READ_FILE_MAX + 1;
  cleanup_free char *buf = bx_xmalloc (cap);
  size_t used = 0;
  while (used < cap)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, buf + used, cap - used));
      if (n < 0)
        return refuse_errno (out_fd, path, errno);
      if (n == 0)
        break;
      used += n;
    }
  if (used > BX_TOOLKIT_READ_FILE_MAX)
    return refuse (out_fd, path, "larger than 1 MiB");
  if (!bx_utf8_valid (buf, used))
    return refuse (out_fd, path, "not UTF-8 text");

  cleanup_error bx_error err = NULL;
  if (bx_toolkit_write (out_fd, buf, used, &err) < 0)
    return bx_toolkit_misused ("%s", bx_error_msg (err));
  return BX_TOOLKIT_DONE;
}

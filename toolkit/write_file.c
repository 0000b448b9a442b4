/* SPDX-License-Identifier: Apache-2.0 */
/* write_file: creates or truncates a file whose parent folder exists, and writes the content. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "tools.h"

static int
refuse_errno (int out_fd, const char *path, int errnum)
{
  char buf[128];
  /* open(O_CREAT) says ENOENT only when a folder on the way is missing. */
  const char *reason = errnum == ENOENT ? "parent directory does not exist"
                                        : bx_toolkit_reason (errnum, buf, sizeof buf);
  return bx_toolkit_refuse (out_fd, "write_file", path, reason);
}

int
bx_toolkit_write_file (const struct bx_tool_args *args, const struct bx_toolkit_env *env,
                       int out_fd)
{
  (void)env;
  const char *path = args->path;
  /* The parser refuses a NUL in a string, so strlen is the content's length. */
  size_t len = strlen (args->content);

  /* O_WRONLY on a directory fails with EISDIR, before anything is created or truncated.
   * O_NONBLOCK: opening a FIFO nobody reads would otherwise wait for ever (it fails with
   * ENXIO instead); only regular files are written, where the flag changes nothing. */
  cleanup_close int fd
      = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0666);
  if (fd < 0 && errno == ENXIO)
    return bx_toolkit_refuse (out_fd, "write_file", path, "not a regular file");
  if (fd < 0)
    return refuse_errno (out_fd, path, errno);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return refuse_errno (out_fd, path, errno);
  if (!S_ISREG (st.st_mode))
    return bx_toolkit_refuse (out_fd, "write_file", path, "not a regular file");

  cleanup_error bx_error err = NULL;
  if (bx_toolkit_write (fd, args->content, len, &err) < 0)
    return refuse_errno (out_fd, path, bx_error_code (err));
  if (close (steal_fd (&fd)) < 0)
    return refuse_errno (out_fd, path, errno);

  cleanup_free char *line
      = bx_xasprintf ("wrote %zu %s to %s", len, len == 1 ? "byte" : "bytes", path);
  if (bx_toolkit_write (out_fd, line, strlen (line), &err) < 0)
    return bx_toolkit_misused ("%s", bx_error_msg (err));
  return BX_TOOLKIT_DONE;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Mount sources without the mounts below them.  bubblewrap binds every --bind-fd and
 * --ro-bind-fd source recursively, so a host mount below a granted folder (a tmpfs, another
 * disk) would show inside the sandbox, writable, though only the folder was granted.
 *
 * So the sandbox's process, still root and before it runs bubblewrap, takes a mount
 * namespace of its own (a slave of the host's: nothing it mounts goes back) and there
 * mounts a non-recursive copy of each source on top of the source itself.
 *
 * A copy starts in its source's peer group: where the source is a shared mount (every
 * mount of a systemd host, whose / is shared), whatever is mounted on a copy would
 * propagate to the host, and host mounts into the copy.  So each copy is made private as
 * soon as it is in place, before the next copy can go on top of it (moving it in
 * propagates nothing: where it lands, the namespace is already a slave).  The descriptor
 * bubblewrap gets is that copy's: bubblewrap resolves it to the same path, finds the copy
 * on top, binds it with its submounts (none) and checks that the folder it bound is the
 * descriptor's (device and inode).
 *
 * A source inside an earlier one (a protected path in a granted folder) lands on that one's
 * copy and comes with it when bubblewrap binds it (bwrap_argv.c): a copy the sandbox must
 * not write is made read-only here, since bubblewrap never binds it by itself.
 *
 * The copy is taken with open_tree from the descriptor brokerd opened without following
 * links, before the namespace changes; the place it goes is found again by path in the new
 * namespace and must be the same folder (device and inode), or the call fails.  Raw system
 * calls only: this runs between fork and exec in a threaded brokerd's descendant. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bwrap.h"
#include "open_nofollow.h"

#define MAX_ALONE BX_BWRAP_MAX_FDS

int
bx_bwrap_same_place (const char *path, int source)
{
  /* Without following links, and without openat2 where a filter refuses it (systemd's
   * RestrictSUIDSGID= answers it ENOSYS). */
  int fd = bx_runtime_open_nofollow (path);
  if (fd < 0)
    return -1;
  struct stat want, got;
  if (fstat (source, &want) < 0 || fstat (fd, &got) < 0 || want.st_dev != got.st_dev
      || want.st_ino != got.st_ino)
    {
      close (fd);
      errno = ESTALE;
      return -1;
    }
  return fd;
}

/* "/proc/self/fd/FD" into LINK (32 bytes), without stdio. */
static void
fd_link (char link[32], int fd)
{
  static const char prefix[] = "/proc/self/fd/";
  char digits[12];
  int n = 0;
  unsigned v = (unsigned)fd;
  do
    digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  memcpy (link, prefix, sizeof prefix - 1);
  char *p = link + sizeof prefix - 1;
  while (n > 0)
    *p++ = digits[--n];
  *p = '\0';
}

int
bx_bwrap_bind_alone (const int *fds, const bool *readonly, size_t count)
{
  if (count == 0)
    return 0;
  if (count > MAX_ALONE)
    {
      errno = EMFILE;
      return -1;
    }
  /* Copies of the sources alone (no AT_RECURSIVE), taken where the sources are mounted. */
  int tree[MAX_ALONE];
  size_t made = 0;
  int rc = -1, e = 0;
  for (; made < count; made++)
    {
      tree[made] = (int)syscall (SYS_open_tree, fds[made], "",
                                 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      if (tree[made] < 0)
        goto out;
    }
  if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    goto out;
  for (size_t i = 0; i < count; i++)
    {
      char link[32], path[4096];
      fd_link (link, fds[i]);
      ssize_t n = readlink (link, path, sizeof path - 1);
      int place = -1;
      if (n > 0 && (size_t)n < sizeof path - 1 && path[0] == '/')
        {
          path[n] = '\0';
          place = bx_bwrap_same_place (path, fds[i]);
        }
      /* Removed ("... (deleted)"), moved under a link, or covered by another mount: the
       * call's source changed under it. */
      if (place < 0)
        {
          errno = ESTALE;
          goto out;
        }
      int moved = (int)syscall (SYS_move_mount, tree[i], "", place, "",
                                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
      e = errno;
      close (place);
      errno = e;
      if (moved < 0)
        goto out;
      /* Private, and the flags bubblewrap's bind gives (nosuid, nodev, and read-only where
       * it must be), on this copy alone and in one call: bubblewrap then finds each copy in
       * its tree as it wants it and remounts none of them, which cost it a system call per
       * protected path.  The source's other flags stay. */
      struct
      {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
      } attr = { MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, MS_PRIVATE, 0 };
      if (readonly != NULL && readonly[i])
        attr.attr_set |= MOUNT_ATTR_RDONLY;
      if (syscall (SYS_mount_setattr, tree[i], "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
        goto out;
      /* The copy's descriptor, now mounted, takes the source's number. */
      if (dup2 (tree[i], fds[i]) < 0)
        goto out;
    }
  rc = 0;
out:
  e = errno;
  for (size_t i = 0; i < made; i++)
    close (tree[i]);
  errno = e;
  return rc;
}

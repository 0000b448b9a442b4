/* SPDX-License-Identifier: Apache-2.0 */
/* A call's folders mounted into a sandbox made ahead of it (bwrap_pool.c).
 *
 * The pool's sandbox was made by bubblewrap with no granted folder: its root, /proc, /dev
 * and /tmp, every namespace and the seccomp filter, and toolkit waiting for its call.  For
 * the call, a child of the slot's keeper (root, single-threaded, never the sandbox's uid)
 * takes the same mount sources as bubblewrap would get, each bound alone with its
 * protected paths read-only on it (bwrap_alone.c), and clones each whole tree.  The clones
 * get what bubblewrap gives a bind: no setuid, no devices, and read-only throughout for a
 * read-only folder.  Then the child enters the sandbox's mount namespace through its pidfd
 * and moves each tree to its place there.
 *
 * A mount point is made only in the sandbox's own root (bubblewrap's tmpfs, made writable
 * for the moment and read-only again after) and /tmp, as the sandbox's uid: never inside
 * another mount, which may be a host's folder.  Each step is opened without following links.  Where
 * a place cannot be made, the call fails here and runs in a sandbox of its own instead
 * (bwrap_call.c).  Raw system calls only: this runs between fork and exit in a threaded brokerd's
 * descendant. */
#include <errno.h>
#include <fcntl.h>
#include <linux/stat.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bwrap.h"

struct mount_attr_args
{
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int
set_attr (int dirfd, unsigned flags, uint64_t set, uint64_t clr)
{
  struct mount_attr_args attr = { set, clr, 0, 0 };
  return (int)syscall (SYS_mount_setattr, dirfd, "", AT_EMPTY_PATH | flags, &attr, sizeof attr);
}

/* The mount DIRFD lies on, or 0 with errno. */
static uint64_t
mount_id (int dirfd)
{
  struct statx st;
  if (syscall (SYS_statx, dirfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) < 0)
    return 0;
  if ((st.stx_mask & STATX_MNT_ID) == 0)
    {
      errno = ENOSYS;
      return 0;
    }
  return st.stx_mnt_id;
}

/* The sandbox's own mounts, made by bubblewrap for it alone: its root and its /tmp. */
struct own_mounts
{
  uint64_t root, tmp;
};

/* Opens the folder PATH below ROOT step by step, without following links, making a missing
 * step only where its parent is on one of the sandbox's OWN mounts.  A descriptor, or -1. */
static int
open_place (int root, const struct own_mounts *own, const char *path)
{
  int dir = (int)syscall (SYS_openat, root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return -1;
  const char *p = path;
  while (*p != '\0')
    {
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      const char *end = p;
      while (*end != '\0' && *end != '/')
        end++;
      char step[256];
      size_t n = (size_t)(end - p);
      if (n >= sizeof step || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
        {
          close (dir);
          errno = EINVAL;
          return -1;
        }
      memcpy (step, p, n);
      step[n] = '\0';
      int next
          = (int)syscall (SYS_openat, dir, step, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      uint64_t on;
      if (next < 0 && errno == ENOENT && (on = mount_id (dir)) != 0
          && (on == own->root || on == own->tmp))
        {
          if (mkdirat (dir, step, 0755) < 0 && errno != EEXIST)
            {
              close (dir);
              return -1;
            }
          next
              = (int)syscall (SYS_openat, dir, step, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
      int e = errno;
      close (dir);
      if (next < 0)
        {
          errno = e;
          return -1;
        }
      dir = next;
      p = end;
    }
  return dir;
}

int
bx_bwrap_join (int pidfd, const int *mounts, const char *const *paths, const bool *readonly,
               const bool *inside, size_t count, int64_t uid, int64_t gid)
{
  int tree[BX_BWRAP_MAX_FDS];
  size_t made = 0;
  int rc = -1, e = 0, root = -1;
  if (count > BX_BWRAP_MAX_FDS)
    {
      errno = EMFILE;
      return -1;
    }
  /* The trees, taken in brokerd's namespace (the copies bwrap_alone.c made), each with what
   * bubblewrap's bind would give it. */
  for (; made < count; made++)
    {
      tree[made] = -1;
      if (inside != NULL && inside[made])
        continue; /* it comes with the tree it lies in */
      tree[made]
          = (int)syscall (SYS_open_tree, mounts[made], "",
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
      if (tree[made] < 0)
        goto out;
      uint64_t set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
      if (readonly == NULL || readonly[made])
        set |= MOUNT_ATTR_RDONLY;
      if (set_attr (tree[made], AT_RECURSIVE, set, 0) < 0)
        goto out;
    }
  if (setns (pidfd, CLONE_NEWNS) < 0)
    goto out;
  /* Places are made as the sandbox's uid, as bubblewrap makes them: its file systems take
   * no owner their user namespace does not map, such as root. */
  if (uid >= 0)
    {
      syscall (SYS_setfsgid, (gid_t)gid);
      syscall (SYS_setfsuid, (uid_t)uid);
    }
  root = (int)syscall (SYS_openat, AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct own_mounts own = { 0, 0 };
  if (root >= 0)
    {
      own.root = mount_id (root);
      int tmp
          = (int)syscall (SYS_openat, root, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (tmp >= 0)
        {
          own.tmp = mount_id (tmp);
          close (tmp);
        }
    }
  /* Both found before anything moves in: a later place may lie in an earlier folder, a
   * host's, where nothing is made. */
  if (own.root == 0 || own.tmp == 0 || own.tmp == own.root
      || set_attr (root, 0, 0, MOUNT_ATTR_RDONLY) < 0)
    goto out;
  for (size_t i = 0; i < count; i++)
    {
      if (tree[i] < 0)
        continue;
      int place = open_place (root, &own, paths[i]);
      if (place < 0)
        goto out;
      int moved = (int)syscall (SYS_move_mount, tree[i], "", place, "",
                                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
      e = errno;
      close (place);
      errno = e;
      if (moved < 0)
        goto out;
    }
  if (set_attr (root, 0, MOUNT_ATTR_RDONLY, 0) < 0)
    goto out;
  rc = 0;
out:
  e = errno;
  for (size_t i = 0; i < made; i++)
    if (tree[i] >= 0)
      close (tree[i]);
  if (root >= 0)
    close (root);
  errno = e;
  return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* A call's folders mounted into a sandbox made ahead of it (bwrap_pool.c).
 *
 * The pool's sandbox was made by bubblewrap with no granted folder: its root, /proc, /dev
 * and /tmp, every namespace and the seccomp filter, and toolkit waiting for its call.  For
 * the call, a child of the slot's keeper (root, single-threaded, never the sandbox's uid)
 * takes the same mount sources as bubblewrap would get, each bound alone with its protected
 * paths read-only on it (bwrap_alone.c), and gives them what bubblewrap's bind gives: no
 * setuid, no devices, read-only throughout for a read-only folder.  As the sandbox's uid it
 * checks that it can reach each folder, as bubblewrap would have to.  It then enters the
 * user namespace that owns the sandbox's mount namespace and copies its own mount namespace
 * there, so that the kernel locks those flags and the protected paths on their folders, as
 * it does for bubblewrap's: a process of the sandbox's uid, which owns that user namespace,
 * cannot undo them.  From that copy it clones each folder's tree, enters the sandbox's mount
 * namespace and moves each tree to its place.
 *
 * A mount point is made only in the sandbox's own root (bubblewrap's tmpfs, made writable
 * for the moment and read-only again after) and /tmp: never inside another mount, which
 * may be a host's folder.  Each step is opened without following links.  Where anything
 * fails, the call runs in a sandbox of its own instead (bwrap_call.c).  Raw system calls
 * only: this runs between fork and exit in a threaded brokerd's descendant. */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <linux/stat.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
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

/* Keeps this process's mount namespace referenced until it exits: the descriptor is left
 * open on purpose.  Only a matter of time: without it, leaving the namespace tears it down. */
static void
keep_namespace (void)
{
  syscall (SYS_openat, AT_FDCWD, "/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
}

/* "/proc/PID" and TAIL into BUF (48 bytes, TAIL at most 16), without stdio. */
static void
proc_path (char buf[48], pid_t pid, const char *tail)
{
  static const char head[] = "/proc/";
  char digits[12];
  int n = 0;
  unsigned v = (unsigned)pid;
  do
    digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  char *p = buf;
  memcpy (p, head, sizeof head - 1);
  p += sizeof head - 1;
  while (n > 0)
    *p++ = digits[--n];
  size_t t = strlen (tail);
  memcpy (p, tail, t + 1);
}

int
bx_bwrap_join (int pidfd, pid_t pid, const int *mounts, const char *const *paths,
               const bool *readonly, const bool *inside, size_t count, int64_t uid, int64_t gid)
{
  int tree[BX_BWRAP_MAX_FDS];
  size_t made = 0;
  int rc = -1, e = 0, root = -1, mnt = -1, user = -1;
  if (count > BX_BWRAP_MAX_FDS || uid < 0 || gid < 0)
    {
      errno = EINVAL;
      return -1;
    }
  /* What bubblewrap's bind gives, on the copies (bwrap_alone.c) while they are still this
   * process's own: copied into the sandbox's user namespace below, the kernel locks it there,
   * as it locks the copies bubblewrap's namespace gets.  A process of the sandbox's uid owns
   * that namespace and may enter it; a flag it could clear, or a protected path it could
   * unmount, would be no protection. */
  for (size_t i = 0; i < count; i++)
    {
      uint64_t set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
      if (readonly == NULL || readonly[i])
        set |= MOUNT_ATTR_RDONLY;
      if ((inside == NULL || !inside[i]) && set_attr (mounts[i], AT_RECURSIVE, set, 0) < 0)
        return -1;
    }
  /* The sandbox's mount namespace and its first process's root, named while the host's
   * /proc is in sight, and the pid still the pidfd's process once both are open (not a
   * process that took a dead one's pid).  The places are found from that root, the one
   * the sandbox's processes see: whatever a process of the sandbox's uid may have mounted
   * over the namespace's root since is not where setns would put this one. */
  char path[48];
  proc_path (path, pid, "/ns/mnt");
  mnt = (int)syscall (SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  proc_path (path, pid, "/root");
  root = (int)syscall (SYS_openat, AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (mnt < 0 || root < 0 || syscall (SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
    goto out;
  user = ioctl (mnt, NS_GET_USERNS);
  if (user < 0)
    goto out;
  /* As the sandbox's uid from here on, as bubblewrap is: a folder it cannot reach is not
   * mounted, and the places made in the sandbox belong to it (its file systems take no
   * owner their user namespace does not map, such as root). */
  if (syscall (SYS_setgroups, 0, NULL) < 0)
    goto out;
  syscall (SYS_setfsgid, (gid_t)gid);
  syscall (SYS_setfsuid, (uid_t)uid);
  for (size_t i = 0; i < count; i++)
    {
      if (inside != NULL && inside[i])
        continue;
      int reach = bx_bwrap_same_place (paths[i], mounts[i]);
      if (reach < 0)
        goto out;
      close (reach);
    }
  /* A mount namespace of the sandbox's user namespace: a copy of this one, locked.  Each
   * namespace this process leaves stays referenced until it exits, after its report: the
   * kernel tears a namespace down when its last reference goes, and that waits for a grace
   * period of RCU, which the call need not wait for. */
  keep_namespace ();
  if (setns (user, CLONE_NEWUSER) < 0 || unshare (CLONE_NEWNS) < 0)
    goto out;
  keep_namespace ();
  for (; made < count; made++)
    {
      tree[made] = -1;
      if (inside != NULL && inside[made])
        continue; /* it comes with the tree it lies in */
      int copy = bx_bwrap_same_place (paths[made], mounts[made]);
      if (copy < 0)
        goto out;
      tree[made]
          = (int)syscall (SYS_open_tree, copy, "",
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
      e = errno;
      close (copy);
      errno = e;
      if (tree[made] < 0)
        goto out;
    }
  if (setns (mnt, CLONE_NEWNS) < 0)
    goto out;
  struct own_mounts own = { mount_id (root), 0 };
  int tmp = (int)syscall (SYS_openat, root, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (tmp >= 0)
    {
      own.tmp = mount_id (tmp);
      close (tmp);
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
  if (mnt >= 0)
    close (mnt);
  if (user >= 0)
    close (user);
  errno = e;
  return rc;
}

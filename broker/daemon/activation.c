/* SPDX-License-Identifier: Apache-2.0 */
/* The socket systemd passed, held to its path: see activation.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "activation.h"

/* The kernel's state number of a listening socket (TCP_LISTEN, shared by Unix sockets). */
#define LISTENING 10

/* The device and inode of the file the Unix socket FD is bound to, as the kernel's socket
 * diagnostics report them (the device in the kernel's own encoding: major << 20 | minor).
 * 1 when found, 0 when the kernel cannot tell (no sock_diag, or a filter forbids netlink). */
static int
bound_file (int fd, uint32_t *dev, uint32_t *ino)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return 0;
  cleanup_close int nl = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0)
    return 0;
  struct
  {
    struct nlmsghdr nlh;
    struct unix_diag_req req;
  } rq = {
    .nlh
    = { .nlmsg_len = sizeof rq, .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST },
    .req = { .sdiag_family = AF_UNIX,
             .udiag_states = 1u << LISTENING,
             .udiag_ino = (uint32_t)st.st_ino,
             .udiag_show = UDIAG_SHOW_VFS,
             .udiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } },
  };
  if (send (nl, &rq, sizeof rq, 0) != (ssize_t)sizeof rq)
    return 0;
  union
  {
    struct nlmsghdr nlh;
    char bytes[8192];
  } buf;
  ssize_t n = recv (nl, &buf, sizeof buf, 0);
  if (n < (ssize_t)sizeof (struct nlmsghdr) || !NLMSG_OK (&buf.nlh, (size_t)n)
      || buf.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY
      || buf.nlh.nlmsg_len < NLMSG_LENGTH (sizeof (struct unix_diag_msg)))
    return 0;
  struct unix_diag_msg *msg = NLMSG_DATA (&buf.nlh);
  if (msg->udiag_ino != (uint32_t)st.st_ino)
    return 0;
  size_t left = buf.nlh.nlmsg_len - NLMSG_LENGTH (sizeof *msg);
  char *at = (char *)(msg + 1);
  while (left >= sizeof (struct nlattr))
    {
      struct nlattr *a = (struct nlattr *)at;
      if (a->nla_len < sizeof *a || a->nla_len > left)
        return 0;
      if (a->nla_type == UNIX_DIAG_VFS && a->nla_len >= NLA_HDRLEN + sizeof (struct unix_diag_vfs))
        {
          struct unix_diag_vfs vfs;
          memcpy (&vfs, at + NLA_HDRLEN, sizeof vfs);
          *dev = vfs.udiag_vfs_dev;
          *ino = vfs.udiag_vfs_ino;
          return 1;
        }
      size_t step = NLA_ALIGN (a->nla_len);
      if (step >= left)
        break;
      at += step;
      left -= step;
    }
  return 0;
}

int
bx_activation_check (const char *path, int listen_fd, char *wake, size_t size, bx_error *err)
{
  /* What a restart of brokerd.service alone cannot mend: the socket unit must be restarted
   * to make the file again. */
  static const char fix[] = "clients cannot reach the socket systemd passed; restart the "
                            "socket unit (systemctl restart brokerd.socket), and keep its "
                            "folder across restarts (RuntimeDirectoryPreserve=yes)";
  int fd = open (path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return bx_error_setc (err, ENOENT, "socket activation: %s is gone: %s", path, fix);
  if (fd < 0)
    return bx_error_set (err, errno, "socket activation: cannot open %s", path);
  struct stat st;
  uint32_t dev, ino;
  if (fstat (fd, &st) < 0 || !S_ISSOCK (st.st_mode)
      || (bound_file (listen_fd, &dev, &ino)
          && (ino != (uint32_t)st.st_ino || major (st.st_dev) != dev >> 20
              || minor (st.st_dev) != (dev & 0xfffff))))
    {
      close (fd);
      return bx_error_setc (
          err, EINVAL, "socket activation: %s is not the socket systemd passed: %s", path, fix);
    }
  int flags = fcntl (listen_fd, F_GETFL);
  if (flags < 0 || fcntl (listen_fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
    {
      int e = errno;
      close (fd);
      return bx_error_set (err, e, "socket activation: cannot make the socket blocking");
    }
  /* FD stays open until the process ends: it is what WAKE names. */
  snprintf (wake, size, "/proc/self/fd/%d", fd);
  return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Each sandbox's share of the kernel's per-uid counters.
 *
 * Every sandbox runs as the same host uid, and the kernel counts some things per uid: the
 * limits of /proc/sys/user (inotify instances and watches, fanotify groups and marks,
 * namespaces of each kind) and the rlimits it keeps as counters (bytes of POSIX message
 * queues, queued signals, locked shared memory).  Left alone, one sandbox could take all
 * of its uid's inotify instances (128 by default), and no other call could make one.
 *
 * The kernel charges such a counter to the (user namespace, uid) of the process, then to
 * the (parent namespace, owner) of each namespace up the chain, each level against its own
 * namespace's limit (kernel/ucount.c).  So before bubblewrap runs, the child (already the
 * sandbox's uid, never root) makes a user namespace of its own, the sandbox's outermost,
 * and writes lower limits into its /proc/sys/user: everything the sandbox makes is charged
 * there, against its share.  The host level sees the namespace's owner, the sandbox uid,
 * never root.  A share is the host's limit divided by the slots plus one, so that all the
 * sandboxes together leave one share for everything else of the uid.
 *
 * The counted rlimits go up the same chain, each level checked against the rlimit its
 * creator had: the namespace is made while the child still has brokerd's, which bounds
 * every sandbox together at the host level, and the child then lowers its own to a share
 * before bubblewrap inherits them. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "bwrap.h"
#include "ucount_limits.h"

_Static_assert(BX_BWRAP_UCOUNT_SYSCTLS == BX_UCOUNT_SYSCTLS, "one list of /proc/sys/user limits");

static const int rlimits[BX_BWRAP_UCOUNT_RLIMITS]
    = { RLIMIT_MSGQUEUE, RLIMIT_SIGPENDING, RLIMIT_MEMLOCK };

void
bx_bwrap_ucounts_shares (size_t slots, struct bx_bwrap_ucounts *u)
{
  memset (u, 0, sizeof *u);
  bx_ucount_sysctl_shares (slots, u->sysctl);
  uint64_t parts = (uint64_t)slots + 1;
  for (int i = 0; i < BX_BWRAP_UCOUNT_RLIMITS; i++)
    {
      struct rlimit rl;
      if (getrlimit (rlimits[i], &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        continue; /* no bound to share: nothing one sandbox could starve the others of */
      u->rlimit[i] = rl.rlim_cur / parts > 0 ? rl.rlim_cur / parts : 1;
    }
  u->set = true;
}

/* V in decimal, then a newline, into BUF; its length.  Async-signal-safe. */
static size_t
format_line (char *buf, uint64_t v)
{
  char digits[24];
  size_t n = 0;
  do
    {
      digits[n++] = (char)('0' + v % 10);
      v /= 10;
    }
  while (v > 0);
  for (size_t i = 0; i < n; i++)
    buf[i] = digits[n - 1 - i];
  buf[n] = '\n';
  return n + 1;
}

static int
write_text (const char *path, const char *text, size_t len)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t w = write (fd, text, len);
  int e = errno;
  close (fd);
  errno = e;
  return w == (ssize_t)len ? 0 : -1;
}

/* "ID ID 1": the id maps to itself. */
static size_t
format_map (char *buf, uint64_t id)
{
  size_t n = format_line (buf, id);
  buf[n - 1] = ' ';
  n += format_line (buf + n, id);
  buf[n - 1] = ' ';
  buf[n++] = '1';
  buf[n++] = '\n';
  return n;
}

int
bx_bwrap_ucounts_enter (const struct bx_bwrap_ucounts *u)
{
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  /* A uid change left the process not dumpable, its /proc/self root's: it could not write
   * its own maps.  bubblewrap's exec makes it dumpable again anyway. */
  if (prctl (PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || unshare (CLONE_NEWUSER) < 0)
    return -1;
  char buf[64];
  size_t n = format_map (buf, uid);
  if (write_text ("/proc/self/uid_map", buf, n) < 0
      || write_text ("/proc/self/setgroups", "deny\n", 5) < 0)
    return -1;
  n = format_map (buf, gid);
  if (write_text ("/proc/self/gid_map", buf, n) < 0)
    return -1;
  /* The limits of this namespace: its creator holds every capability in it until exec. */
  for (int i = 0; i < BX_BWRAP_UCOUNT_SYSCTLS; i++)
    {
      if (u->sysctl[i] == 0)
        continue;
      n = format_line (buf, u->sysctl[i]);
      if (write_text (bx_ucount_sysctls[i], buf, n) < 0 && errno != ENOENT)
        return -1;
    }
  for (int i = 0; i < BX_BWRAP_UCOUNT_RLIMITS; i++)
    {
      if (u->rlimit[i] == 0)
        continue;
      struct rlimit rl = { u->rlimit[i], u->rlimit[i] };
      struct rlimit now;
      if (getrlimit (rlimits[i], &now) == 0 && now.rlim_cur != RLIM_INFINITY
          && now.rlim_cur < rl.rlim_cur)
        continue; /* already lower */
      if (setrlimit (rlimits[i], &rl) < 0)
        return -1;
    }
  return 0;
}

int
bx_bwrap_ucounts_check (const struct bx_bwrap_ucounts *u, int64_t uid, int64_t gid, bx_error *err)
{
  pid_t pid = fork ();
  if (pid < 0)
    return bx_error_set (err, errno, "cannot fork");
  if (pid == 0)
    {
      /* As a sandbox's child does it: the sandbox's uid first (bwrap_run.c). */
      if (geteuid () == 0
          && (syscall (SYS_setgroups, 0, NULL) < 0
              || syscall (SYS_setresgid, (gid_t)gid, (gid_t)gid, (gid_t)gid) < 0
              || syscall (SYS_setresuid, (uid_t)uid, (uid_t)uid, (uid_t)uid) < 0))
        _exit (errno & 0x7f);
      _exit (bx_bwrap_ucounts_enter (u) < 0 ? errno & 0x7f : 0);
    }
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return bx_error_set (err, errno, "cannot wait for the check");
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  return bx_error_setc (err, 0,
                        "uid %lld cannot make a user namespace and set its /proc/sys/user "
                        "limits: %s",
                        (long long)uid,
                        WIFEXITED (status) ? strerror (WEXITSTATUS (status)) : "killed");
}

/* SPDX-License-Identifier: Apache-2.0 */
/* A static program the adversarial suite runs inside each runtime's sandbox to try what the
 * seccomp table (runtimes/common/seccomp_table.c) refuses.  Built with that table, so the
 * list of calls tried is the list the filters are made from.  Each line is NAME=RESULT,
 * and a line starting FAIL says what was expected instead.
 *
 *   seccomp_probe table        every row: each value it refuses gets exactly its errno;
 *                              a value it allows gets what the kernel says (not the errno)
 *   seccomp_probe setid        makes files with setuid and setgid bits every way it can,
 *                              in the current folder, and sets file capabilities
 *   seccomp_probe families     real sockets and socket pairs of many address families,
 *                              and the i386 entry points (socketcall, chmod)
 *   seccomp_probe has-caps F   (host) exit 0 when F has a security.capability attribute
 *
 * Arguments a row does not look at are all ones (-1): a pointer the kernel cannot read, a
 * descriptor that is not open, flags it refuses, so that an allowed call fails harmlessly
 * with the kernel's own errno. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "seccomp_table.h"

static int failures;

static const char *
errname (int e)
{
  const char *n = strerrorname_np (e);
  return n != NULL ? n : "E?";
}

/* Calls NR with argument ARG at ARG_VALUE and every other one -1; the errno, or 0. */
static int
attempt (long nr, unsigned arg, uint64_t arg_value)
{
  long a[6];
  for (int i = 0; i < 6; i++)
    a[i] = -1;
  a[arg] = (long)arg_value;
  errno = 0;
  long r = syscall (nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  if (r >= 0)
    {
      /* An allowed call that made a descriptor (a socket of an allowed family cannot: its
       * type is -1). */
      if (r > 2)
        close ((int)r);
      return 0;
    }
  return errno;
}

static void
expect_refused (const struct bx_seccomp_rule *row, long nr, unsigned arg, uint64_t v)
{
  int e = attempt (nr, arg, v);
  if (e == row->errno_value)
    printf ("%s(arg%u=%#llx)=%s\n", row->name, arg, (unsigned long long)v, errname (e));
  else
    {
      printf ("FAIL %s(arg%u=%#llx)=%s, refused with %s expected\n", row->name, arg,
              (unsigned long long)v, e ? errname (e) : "ok", errname (row->errno_value));
      failures++;
    }
}

static void
expect_allowed (const struct bx_seccomp_rule *row, long nr, unsigned arg, uint64_t v)
{
  int e = attempt (nr, arg, v);
  /* ENOSYS: a filter that refuses what it does not allow forgot this value. */
  if (e != row->errno_value && e != ENOSYS)
    printf ("%s(arg%u=%#llx)=allowed:%s\n", row->name, arg, (unsigned long long)v,
            e ? errname (e) : "ok");
  else
    {
      printf ("FAIL %s(arg%u=%#llx)=%s, allowed expected\n", row->name, arg, (unsigned long long)v,
              errname (e));
      failures++;
    }
}

static void
try_row (const struct bx_seccomp_rule *row)
{
  int nr = seccomp_syscall_resolve_name (row->name);
  if (nr == __NR_SCMP_ERROR && row->nr != 0)
    nr = row->nr;
  if (nr == __NR_SCMP_ERROR)
    {
      printf ("FAIL %s=unknown to this probe's libseccomp\n", row->name);
      failures++;
      return;
    }
  if (nr < 0)
    {
      printf ("%s=not on this architecture\n", row->name);
      return;
    }
#if defined(__s390__)
  unsigned arg = row->arg_s390;
#else
  unsigned arg = row->arg;
#endif
  switch (row->when)
    {
    case BX_SECCOMP_ALWAYS:
      expect_refused (row, nr, arg, (uint64_t)-1);
      break;
    case BX_SECCOMP_ANY_BIT:
      for (unsigned bit = 0; bit < 64; bit++)
        if (row->value & (UINT64_C (1) << bit))
          expect_refused (row, nr, arg, UINT64_C (1) << bit);
      /* clone with no namespace flag and a stack of -1 would start a child that crashes;
       * fork (below) is that call allowed. */
      if (strcmp (row->name, "clone") != 0)
        expect_allowed (row, nr, arg, 0);
      break;
    case BX_SECCOMP_LOW32_IS:
      expect_refused (row, nr, arg, row->value);
      /* The kernel reads an int: bits above it must not hide the value. */
      expect_refused (row, nr, arg, row->value | UINT64_C (1) << 32);
      expect_allowed (row, nr, arg, row->value + 1);
      break;
    case BX_SECCOMP_NOT_IN:
      for (uint64_t v = 0; v < 64; v++)
        if (bx_seccomp_refuses (row, v))
          expect_refused (row, nr, arg, v);
        else
          expect_allowed (row, nr, arg, v);
      expect_refused (row, nr, arg, row->allowed[0] | UINT64_C (1) << 32);
      expect_refused (row, nr, arg, (uint64_t)-1);
      break;
    }
}

static void
check (const char *name, int ok, const char *expected)
{
  if (ok)
    printf ("%s=ok\n", name);
  else
    {
      printf ("FAIL %s=%s, %s expected\n", name, errname (errno), expected);
      failures++;
    }
}

/* What every sandbox still does: fork, ordinary modes, the three families. */
static void
allowed_basics (void)
{
  pid_t pid = fork ();
  if (pid == 0)
    _exit (0);
  check ("fork", pid > 0 && waitpid (pid, NULL, 0) == pid, "a child");
  int fd = open ("seccomp-probe-plain", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  check ("open(O_CREAT, 0755)", fd >= 0, "a file");
  if (fd >= 0)
    {
      check ("fchmod(0644)", fchmod (fd, 0644) == 0, "success");
      close (fd);
    }
  check ("chmod(01777)", chmod ("seccomp-probe-plain", 01777) == 0, "success");
  unlink ("seccomp-probe-plain");
  check ("mkdir(0755)", mkdir ("seccomp-probe-dir", 0755) == 0, "success");
  rmdir ("seccomp-probe-dir");
  static const int families[] = { AF_UNIX, AF_INET, AF_INET6 };
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    {
      char name[32];
      snprintf (name, sizeof name, "socket(%d)", families[i]);
      int s = socket (families[i], SOCK_STREAM | SOCK_CLOEXEC, 0);
      check (name, s >= 0, "a socket");
      if (s >= 0)
        close (s);
    }
  int pair[2];
  check ("socketpair(AF_UNIX)", socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0,
         "a pair");
}

/* Every way this program knows to leave a setuid or setgid file, or file capabilities. */
static void
setid (void)
{
  static const mode_t modes[] = { 04755, 02755, 06755 };
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    {
      mode_t m = modes[i];
      char name[64];
      snprintf (name, sizeof name, "open-%o", m);
      int fd = open (name, O_WRONLY | O_CREAT | O_CLOEXEC, m);
      printf ("open(O_CREAT, %o)=%s\n", m, fd >= 0 ? "ok" : errname (errno));
      if (fd >= 0)
        close (fd);
      snprintf (name, sizeof name, "creat-%o", m);
      fd = creat (name, m);
      printf ("creat(%o)=%s\n", m, fd >= 0 ? "ok" : errname (errno));
      if (fd >= 0)
        close (fd);
      snprintf (name, sizeof name, "mknod-%o", m);
      printf ("mknod(S_IFREG|%o)=%s\n", m,
              mknod (name, S_IFREG | m, 0) == 0 ? "ok" : errname (errno));
      snprintf (name, sizeof name, "dir-%o", m);
      printf ("mkdir(%o)=%s\n", m, mkdir (name, m) == 0 ? "ok" : errname (errno));
      snprintf (name, sizeof name, "chmod-%o", m);
      fd = open (name, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
      if (fd >= 0)
        {
          printf ("chmod(%o)=%s\n", m, chmod (name, m) == 0 ? "ok" : errname (errno));
          printf ("fchmod(%o)=%s\n", m, fchmod (fd, m) == 0 ? "ok" : errname (errno));
          printf ("fchmodat(%o)=%s\n", m,
                  fchmodat (AT_FDCWD, name, m, 0) == 0 ? "ok" : errname (errno));
          printf ("fchmodat2(%o)=%s\n", m,
                  syscall (452, AT_FDCWD, name, m, 0) == 0 ? "ok" : errname (errno));
          close (fd);
        }
      /* openat2's mode is in memory. */
      struct
      {
        uint64_t flags, mode, resolve;
      } how = { O_WRONLY | O_CREAT | O_CLOEXEC, m, 0 };
      snprintf (name, sizeof name, "openat2-%o", m);
      long r = syscall (437, AT_FDCWD, name, &how, sizeof how);
      printf ("openat2(%o)=%s\n", m, r >= 0 ? "ok" : errname (errno));
      if (r >= 0)
        close ((int)r);
    }
  /* A capability set for the file (version 2: the kernel makes it version 3 for a root
   * in a user namespace). */
  struct vfs_cap_data caps = { .magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
                               .data = { { .permitted = 1u << CAP_SETUID } } };
  int fd = open ("caps", O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
  if (fd >= 0)
    close (fd);
  printf ("setxattr(security.capability)=%s\n",
          setxattr ("caps", "security.capability", &caps, XATTR_CAPS_SZ_2, 0) == 0
              ? "ok"
              : errname (errno));
  printf ("setxattr(user.x)=%s\n",
          setxattr ("caps", "user.x", "1", 1, 0) == 0 ? "ok" : errname (errno));
}

/* The i386 entry point (int $0x80) from a 64-bit program: a filter must not let a call
 * through there that it refuses here.  Run in a child: a filter may kill it.  Arguments
 * live below 4 GiB (a static program's data). */
#if defined(__x86_64__)
static long
int80 (long nr, long a, long b)
{
  long r;
  __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b) : "memory");
  return r;
}

static unsigned int socketcall_args[3] = { 40 /* AF_VSOCK */, SOCK_STREAM, 0 };
static char i386_path[] = "i386-chmod";

static void
i386_entry (const char *name, long nr, long a, long b)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      long r = int80 (nr, a, b);
      _exit (r >= 0 ? 0 : (int)-r);
    }
  int status = 0;
  waitpid (pid, &status, 0);
  if (WIFSIGNALED (status))
    printf ("%s=killed by signal %d\n", name, WTERMSIG (status));
  else if (WEXITSTATUS (status) == 0)
    printf ("FAIL %s=ok, refused or killed expected\n", name), failures++;
  else
    printf ("%s=%s\n", name, errname (WEXITSTATUS (status)));
}
#endif

static void
families (void)
{
  static const struct
  {
    const char *name;
    int family, type, protocol;
  } tries[] = {
    { "AF_VSOCK", 40, SOCK_STREAM, 0 },
    { "AF_NETLINK", AF_NETLINK, SOCK_RAW, 0 },
    { "AF_PACKET", AF_PACKET, SOCK_DGRAM, 0 },
    { "AF_ALG", AF_ALG, SOCK_SEQPACKET, 0 },
    { "AF_KEY", AF_KEY, SOCK_RAW, 2 },
    { "AF_XDP", 44, SOCK_RAW, 0 },
    { "AF_TIPC", AF_TIPC, SOCK_RDM, 0 },
    { "AF_BLUETOOTH", AF_BLUETOOTH, SOCK_RAW, 1 },
    { "AF_CAN", AF_CAN, SOCK_RAW, 1 },
    { "AF_RDS", AF_RDS, SOCK_SEQPACKET, 0 },
    { "AF_QIPCRTR", 42, SOCK_DGRAM, 0 },
    { "AF_MCTP", 45, SOCK_DGRAM, 0 },
    { "AF_APPLETALK", AF_APPLETALK, SOCK_DGRAM, 0 },
  };
  for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++)
    {
      int s = socket (tries[i].family, tries[i].type | SOCK_CLOEXEC, tries[i].protocol);
      printf ("socket(%s)=%s\n", tries[i].name, s >= 0 ? "ok" : errname (errno));
      if (s >= 0)
        close (s);
      int pair[2];
      int r = socketpair (tries[i].family, tries[i].type | SOCK_CLOEXEC, tries[i].protocol, pair);
      printf ("socketpair(%s)=%s\n", tries[i].name, r == 0 ? "ok" : errname (errno));
      if (r == 0)
        close (pair[0]), close (pair[1]);
    }
  /* The kernel reads an int: AF_VSOCK with a bit above it. */
  long s = syscall (SYS_socket, (long)(UINT64_C (1) << 32 | 40), SOCK_STREAM, 0);
  printf ("socket(AF_VSOCK|1<<32)=%s\n", s >= 0 ? "ok" : errname (errno));
#if defined(__x86_64__)
  i386_entry ("i386 socketcall(AF_VSOCK)", 102, 1 /* SYS_SOCKET */, (long)socketcall_args);
  int fd = open (i386_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
  if (fd >= 0)
    close (fd);
  i386_entry ("i386 chmod(4755)", 15, (long)i386_path, 04755);
#endif
}

int
main (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "table") == 0)
    {
      for (size_t i = 0; i < bx_seccomp_rule_count; i++)
        try_row (&bx_seccomp_rules[i]);
      allowed_basics ();
    }
  else if (argc >= 2 && strcmp (argv[1], "setid") == 0)
    setid ();
  else if (argc >= 2 && strcmp (argv[1], "families") == 0)
    families ();
  else if (argc >= 3 && strcmp (argv[1], "has-caps") == 0)
    return getxattr (argv[2], "security.capability", NULL, 0) < 0;
  else
    {
      fprintf (stderr, "usage: seccomp_probe table|setid|families|has-caps FILE\n");
      return 2;
    }
  printf ("failures=%d\n", failures);
  return 0;
}

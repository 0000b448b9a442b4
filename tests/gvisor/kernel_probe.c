/* SPDX-License-Identifier: Apache-2.0 */
/* Which kernel answers a system call that the seccomp table refuses: run from a grant by a
 * sandboxed shell (and on the host, for the host kernel's own answer).  One line per call,
 * NAME=ANSWER table=ERRNO, where ANSWER is the errno's name or "ok" and ERRNO is what the
 * table's row makes bwrap.so's and podman.so's filters answer on the host.
 *
 * io_uring_setup is the row gvisor.so leaves out of the filter gVisor's kernel runs (see
 * runtimes/gvisor/gvisor_seccomp.c), so there the call reaches gVisor's own io_uring, which
 * refuses a ring the host kernel makes (IORING_SETUP_IOPOLL); under a host filter it is
 * the table's ENOSYS; on the bare host kernel, a ring.  socket(AF_VSOCK) is a family the
 * address-family rows refuse. */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_table.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static const char *
table_errno (const char *call)
{
  for (size_t i = 0; i < bx_seccomp_rule_count; i++)
    if (strcmp (bx_seccomp_rules[i].name, call) == 0)
      return strerrorname_np (bx_seccomp_rules[i].errno_value);
  return "none";
}

static void
report (const char *name, const char *call, long r)
{
  printf ("%s=%s table=%s\n", name, r >= 0 ? "ok" : strerrorname_np (errno), table_errno (call));
  if (r > 2)
    close ((int)r);
}

static long
ring (unsigned flags)
{
  struct io_uring_params p;
  memset (&p, 0, sizeof p);
  p.flags = flags;
  errno = 0;
  return syscall (425 /* io_uring_setup, numbered alike on x86-64 and arm64 */, 1, &p);
}

int
main (void)
{
  report ("io_uring_setup(IOPOLL)", "io_uring_setup", ring (IORING_SETUP_IOPOLL));
  report ("io_uring_setup", "io_uring_setup", ring (0));
  errno = 0;
  report ("socket(AF_VSOCK)", "socket", socket (AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0));
  return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's seccomp filter, built with libseccomp and handed to bubblewrap as BPF
 * (--seccomp FD), which loads it last, just before it runs toolkit.
 *
 * It refuses (EPERM) what a sandbox never needs and an escape often does: the kernel
 * keyrings (keyctl, add_key, request_key), ptrace of anything, and making or joining
 * namespaces (unshare, setns, clone or clone3 with a CLONE_NEW* flag).  Everything else
 * is allowed: toolkit runs busybox and curl, whose needs are broad.  System calls of
 * another architecture (the x32 or i386 entry points) kill the process, libseccomp's
 * default for a foreign architecture. */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "bwrap.h"

static const int refused[] = {
  SCMP_SYS (keyctl),  SCMP_SYS (add_key), SCMP_SYS (request_key),      SCMP_SYS (ptrace),
  SCMP_SYS (unshare), SCMP_SYS (setns),   SCMP_SYS (process_vm_readv), SCMP_SYS (process_vm_writev),
};

int
bx_bwrap_seccomp_build (void **bpf, size_t *len, char **why)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL)
    {
      *why = bx_xstrdup ("seccomp_init failed");
      return -1;
    }
  int r = 0;
  for (size_t i = 0; r == 0 && i < sizeof refused / sizeof refused[0]; i++)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), refused[i], 0);
  /* clone's flags are its first argument on x86-64 and arm64; one rule per flag, since
   * rules for one system call add up (any of them refuses). */
  static const unsigned long namespace_flags[] = {
    CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,    CLONE_NEWUSER,
    CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP, 0x00000080 /* CLONE_NEWTIME */,
  };
  for (size_t i = 0; r == 0 && i < sizeof namespace_flags / sizeof namespace_flags[0]; i++)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone), 1,
                          SCMP_A0 (SCMP_CMP_MASKED_EQ, namespace_flags[i], namespace_flags[i]));
  /* clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library
   * fall back to clone, whose flags it can. */
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (clone3), 0);
  /* TIOCSTI would push input into a terminal outside (bubblewrap's --new-session already
   * detaches the sandbox from it; this also holds if a terminal is ever passed). */
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (ioctl), 1,
                          SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffu, 0x5412 /* TIOCSTI */));
  if (r != 0)
    {
      *why = bx_xasprintf ("seccomp_rule_add: %s", strerror (-r));
      seccomp_release (ctx);
      return -1;
    }

  int fd = memfd_create ("bx-seccomp", MFD_CLOEXEC);
  if (fd < 0 || (r = seccomp_export_bpf (ctx, fd)) != 0)
    {
      *why = bx_xasprintf ("cannot export the seccomp filter: %s", strerror (fd < 0 ? errno : -r));
      if (fd >= 0)
        close (fd);
      seccomp_release (ctx);
      return -1;
    }
  seccomp_release (ctx);
  off_t size = lseek (fd, 0, SEEK_END);
  char *bytes = bx_xmalloc (size > 0 ? (size_t)size : 1);
  if (size <= 0 || pread (fd, bytes, (size_t)size, 0) != size)
    {
      *why = bx_xstrdup ("cannot read the seccomp filter back");
      free (bytes);
      close (fd);
      return -1;
    }
  close (fd);
  *bpf = bytes;
  *len = (size_t)size;
  return 0;
}

int
bx_bwrap_seccomp_fd (const void *bpf, size_t len)
{
  int fd = memfd_create ("bx-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  if (pwrite (fd, bpf, len, 0) != (ssize_t)len)
    {
      int saved = errno ? errno : EIO;
      close (fd);
      errno = saved;
      return -1;
    }
  return fd;
}

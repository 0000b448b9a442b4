/* SPDX-License-Identifier: Apache-2.0 */
/* restrict-suid PROGRAM [ARGS...]: runs PROGRAM the way systemd's RestrictSUIDSGID=yes
 * would (for the chmod family): no_new_privs, and a seccomp filter that refuses with EPERM
 * any chmod, fchmod or fchmodat setting a setuid or setgid bit, and openat2 with ENOSYS
 * (systemd cannot read its mode, so it refuses it whole).  Filters are inherited, so
 * the containers brokerd starts get it too.  packaging/test-packages.sh uses it to try the
 * rootful drop-in (packaging/systemd/brokerd-rootful.conf) where systemd is not PID 1. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "restrict-suid knows only x86_64's system call numbers"
#endif

#define ARG_LO(n) (offsetof (struct seccomp_data, args) + 8 * (n))
/* If the call is SYSNO and argument ARGN has S_ISUID or S_ISGID: EPERM.  Then reload nr. */
#define DENY_IF_SUID(sysno, argn)                                                                  \
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (sysno), 0, 3),                                             \
      BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG_LO (argn)),                                          \
      BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, 06000, 0, 1),                                          \
      BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),                                       \
      BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr))

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fputs ("usage: restrict-suid PROGRAM [ARGS...]\n", stderr);
      return 2;
    }
  struct sock_filter filter[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    DENY_IF_SUID (SYS_chmod, 1),
    DENY_IF_SUID (SYS_fchmod, 1),
    DENY_IF_SUID (SYS_fchmodat, 2),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, 437 /* openat2 */, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof filter / sizeof filter[0], .filter = filter };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
    {
      perror ("restrict-suid: seccomp");
      return 1;
    }
  execvp (argv[1], argv + 1);
  perror ("restrict-suid: exec");
  return 127;
}

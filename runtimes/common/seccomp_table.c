/* SPDX-License-Identifier: Apache-2.0 */
/* The one list of what a sandbox's seccomp filter refuses (seccomp_table.h says who reads it).
 *
 * A call whose deciding argument lies in memory (clone3's flags, openat2's mode, the
 * names of extended attributes, io_uring's requests) cannot be filtered by its arguments:
 * it is refused whole.  ENOSYS for a call the C library can do without (it falls back to
 * an older call whose arguments a filter reads, as for a kernel that lacks it); another
 * errno where callers read one as "not here". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the CLONE_NEW* flags */
#endif
#include "seccomp_table.h"

#include <errno.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define NAMESPACE_FLAGS                                                                            \
  (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET         \
   | CLONE_NEWCGROUP | CLONE_NEWTIME)
#define SET_ID_BITS (S_ISUID | S_ISGID)
#define TIOCSTI_CMD 0x5412

#define ALWAYS(n, e, w)                                                                            \
  {                                                                                                \
    .name = n, .errno_value = e, .when = BX_SECCOMP_ALWAYS, .why = w                               \
  }
#define ALWAYS_NR(n, nr_, e, w)                                                                    \
  {                                                                                                \
    .name = n, .nr = nr_, .errno_value = e, .when = BX_SECCOMP_ALWAYS, .why = w                    \
  }
/* A creating or chmod-like call whose mode is argument i. */
#define NO_SET_ID(n, i)                                                                            \
  {                                                                                                \
    .name = n, .errno_value = EPERM, .when = BX_SECCOMP_ANY_BIT, .arg = i, .arg_s390 = i,          \
    .value = SET_ID_BITS,                                                                          \
    .why = "no setuid or setgid bit: a file the sandbox leaves would run as its uid"               \
  }
#define FAMILIES(n)                                                                                \
  {                                                                                                \
    .name = n, .errno_value = EAFNOSUPPORT, .when = BX_SECCOMP_NOT_IN, .arg = 0, .arg_s390 = 0,    \
    .allowed = { AF_UNIX, AF_INET, AF_INET6 }, .n_allowed = 3,                                     \
    .why = "Unix, IPv4 and IPv6 sockets only: vsock, netlink, packet and the rest reach past "     \
           "the network namespace or into the kernel"                                              \
  }

const struct bx_seccomp_rule bx_seccomp_rules[] = {
  /* Kernel keyrings are namespaced by neither mounts nor pids. */
  ALWAYS ("keyctl", EPERM, "no kernel keyrings"),
  ALWAYS ("add_key", EPERM, "no kernel keyrings"),
  ALWAYS ("request_key", EPERM, "no kernel keyrings"),
  ALWAYS ("ptrace", EPERM, "no tracing"),
  ALWAYS ("process_vm_readv", EPERM, "no reading another process's memory"),
  ALWAYS ("process_vm_writev", EPERM, "no writing another process's memory"),
  /* A new user namespace gives every capability inside it, and the kernel's surface with
   * them; other namespaces need one. */
  ALWAYS ("unshare", EPERM, "no new namespaces"),
  ALWAYS ("setns", EPERM, "no joining namespaces"),
  { .name = "clone",
    .errno_value = EPERM,
    .when = BX_SECCOMP_ANY_BIT,
    .arg = 0,
    .arg_s390 = 1,
    .value = NAMESPACE_FLAGS,
    .why = "no new namespaces" },
  ALWAYS_NR ("clone3", 435, ENOSYS, "flags in memory: the C library falls back to clone"),
  /* TIOCSTI pushes input into a terminal, which may be one outside. */
  { .name = "ioctl",
    .errno_value = EPERM,
    .when = BX_SECCOMP_LOW32_IS,
    .arg = 1,
    .arg_s390 = 1,
    .value = TIOCSTI_CMD,
    .why = "no TIOCSTI: no typing into a terminal" },
  /* No file the sandbox leaves is setuid or setgid: neither a mode change nor a creating
   * call's mode may carry the bits (the kernel ignores them in mkdir's, refused all the
   * same).  Copying tools (cp -p, tar, install -m) go through these calls too. */
  NO_SET_ID ("chmod", 1),
  NO_SET_ID ("fchmod", 1),
  NO_SET_ID ("fchmodat", 2),
  ALWAYS_NR ("fchmodat2", 452, ENOSYS, "the C library falls back to fchmodat"),
  NO_SET_ID ("open", 2),
  NO_SET_ID ("openat", 3),
  NO_SET_ID ("creat", 1),
  NO_SET_ID ("mkdir", 1),
  NO_SET_ID ("mkdirat", 2),
  NO_SET_ID ("mknod", 1),
  NO_SET_ID ("mknodat", 2),
  ALWAYS_NR ("openat2", 437, ENOSYS, "mode in memory: the C library falls back to openat"),
  /* File capabilities live in security.capability; the names are in memory, so no
   * extended attribute is set.  EOPNOTSUPP is what cp -a and tar read as "this file system
   * keeps none" and go on; EPERM would fail the copy. */
  ALWAYS ("setxattr", EOPNOTSUPP, "no extended attributes, hence no file capabilities"),
  ALWAYS ("lsetxattr", EOPNOTSUPP, "no extended attributes, hence no file capabilities"),
  ALWAYS ("fsetxattr", EOPNOTSUPP, "no extended attributes, hence no file capabilities"),
  ALWAYS_NR ("setxattrat", 463, ENOSYS, "no extended attributes, hence no file capabilities"),
  /* io_uring's requests (open with a mode, set an attribute, make a socket) never pass
   * through this filter. */
  ALWAYS_NR ("io_uring_setup", 425, ENOSYS, "no io_uring: its requests bypass this filter"),
  ALWAYS_NR ("io_uring_enter", 426, ENOSYS, "no io_uring: its requests bypass this filter"),
  ALWAYS_NR ("io_uring_register", 427, ENOSYS, "no io_uring: its requests bypass this filter"),
  /* Linux AIO's events are one count for the whole machine (fs.aio-max-nr), in no namespace
   * and for no uid: a sandbox could take them all from every host program that uses them.
   * Without a context, io_submit and the rest have nothing to work on; programs fall back
   * to threads, as the C library's aio_* always do. */
  ALWAYS ("io_setup", ENOSYS, "no Linux AIO: its events are one count for the whole host"),
  FAMILIES ("socket"),
  FAMILIES ("socketpair"),
  /* Where socket calls can go through socketcall (i386, s390), their family is in memory. */
  ALWAYS ("socketcall", ENOSYS, "family in memory: the C library uses socket"),
  /* What podman's default profile already refuses for a container without capabilities,
   * refused in every sandbox: the kernel's surface a sandbox never needs. */
  ALWAYS ("userfaultfd", EPERM, "no userfaultfd"),
  ALWAYS ("bpf", EPERM, "no BPF"),
  ALWAYS ("perf_event_open", EPERM, "no performance events"),
};

const size_t bx_seccomp_rule_count = sizeof bx_seccomp_rules / sizeof bx_seccomp_rules[0];

static bool
allowed_value (const struct bx_seccomp_rule *row, uint64_t v)
{
  for (unsigned i = 0; i < row->n_allowed; i++)
    if (row->allowed[i] == v)
      return true;
  return false;
}

static uint64_t
largest_allowed (const struct bx_seccomp_rule *row)
{
  uint64_t max = 0;
  for (unsigned i = 0; i < row->n_allowed; i++)
    if (row->allowed[i] > max)
      max = row->allowed[i];
  return max;
}

int
bx_seccomp_expand (const struct bx_seccomp_rule *row, unsigned arg, bool with_allow,
                   bx_seccomp_add_fn add, void *ctx)
{
  int r = 0;
  struct bx_seccomp_cmp c = { .arg = arg };
  switch (row->when)
    {
    case BX_SECCOMP_ALWAYS:
      return add (ctx, row, false, NULL);
    case BX_SECCOMP_ANY_BIT:
      /* Refused: any one bit set.  Allowed: all of them clear. */
      c.op = BX_SECCOMP_MASKED_EQ;
      for (unsigned bit = 0; r == 0 && bit < 64; bit++)
        if (row->value & (UINT64_C (1) << bit))
          {
            c.a = c.b = UINT64_C (1) << bit;
            r = add (ctx, row, false, &c);
          }
      if (r == 0 && with_allow)
        {
          c.a = row->value;
          c.b = 0;
          r = add (ctx, row, true, &c);
        }
      return r;
    case BX_SECCOMP_LOW32_IS:
      c.op = BX_SECCOMP_MASKED_EQ;
      c.a = UINT32_MAX;
      c.b = row->value;
      r = add (ctx, row, false, &c);
      /* Allowed: the low 32 bits differ from the value in one bit at least. */
      for (unsigned bit = 0; r == 0 && with_allow && bit < 32; bit++)
        {
          c.a = UINT64_C (1) << bit;
          c.b = ~row->value & c.a;
          r = add (ctx, row, true, &c);
        }
      return r;
    case BX_SECCOMP_NOT_IN:
      {
        /* Refused: every value below the largest allowed one that is not allowed, and
         * everything above it (64 bits wide: the kernel's int never hides a set bit). */
        uint64_t max = largest_allowed (row);
        c.op = BX_SECCOMP_EQ;
        for (uint64_t v = 0; r == 0 && v < max; v++)
          if (!allowed_value (row, v))
            {
              c.a = v;
              r = add (ctx, row, false, &c);
            }
        if (r == 0)
          {
            c.op = BX_SECCOMP_GT;
            c.a = max;
            r = add (ctx, row, false, &c);
          }
        c.op = BX_SECCOMP_EQ;
        for (unsigned i = 0; r == 0 && with_allow && i < row->n_allowed; i++)
          {
            c.a = row->allowed[i];
            r = add (ctx, row, true, &c);
          }
        return r;
      }
    }
  return -1;
}

bool
bx_seccomp_refuses (const struct bx_seccomp_rule *row, uint64_t v)
{
  switch (row->when)
    {
    case BX_SECCOMP_ALWAYS:
      return true;
    case BX_SECCOMP_ANY_BIT:
      return (v & row->value) != 0;
    case BX_SECCOMP_LOW32_IS:
      return (v & UINT32_MAX) == row->value;
    case BX_SECCOMP_NOT_IN:
      return !allowed_value (row, v);
    }
  return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's seccomp filter, built with libseccomp and handed to bubblewrap as BPF
 * (--seccomp FD), which loads it last, just before it runs toolkit (after it has set up
 * the sandbox's loopback over netlink, which the filter refuses).
 *
 * It refuses what the seccomp table (runtimes/common/seccomp_table.c) refuses, the list
 * podman.so's profile is made from too; everything else is allowed: toolkit runs busybox
 * and curl, whose needs are broad, and the sandbox holds no capability.  System calls of
 * another architecture (the x32 or i386 entry points) kill the process, libseccomp's
 * default for a foreign architecture. */
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "bwrap.h"
#include "seccomp_table.h"

static const enum scmp_compare ops[] = {
  [BX_SECCOMP_EQ] = SCMP_CMP_EQ,
  [BX_SECCOMP_GT] = SCMP_CMP_GT,
  [BX_SECCOMP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
};

struct build
{
  scmp_filter_ctx ctx;
  int nr;
};

static int
add_rule (void *data, const struct bx_seccomp_rule *row, bool allow,
          const struct bx_seccomp_cmp *cmp)
{
  struct build *b = data;
  if (allow)
    return 0; /* the filter allows whatever it does not refuse */
  uint32_t action = SCMP_ACT_ERRNO ((uint32_t)row->errno_value);
  if (cmp == NULL)
    return seccomp_rule_add (b->ctx, action, b->nr, 0);
  struct scmp_arg_cmp c
      = { .arg = cmp->arg, .op = ops[cmp->op], .datum_a = cmp->a, .datum_b = cmp->b };
  return seccomp_rule_add_array (b->ctx, action, b->nr, 1, &c);
}

/* The native number of ROW's call in *NR, or -1 when this architecture has no such call
 * (libseccomp names it with a negative pseudo number).  Fails when neither libseccomp nor
 * the table knows the call here. */
static int
native_number (const struct bx_seccomp_rule *row, int *nr)
{
  int n = seccomp_syscall_resolve_name (row->name);
  if (n != __NR_SCMP_ERROR)
    {
      *nr = n >= 0 ? n : -1;
      return 0;
    }
#if defined(__x86_64__) || defined(__aarch64__)
  /* A call newer than this libseccomp: these number every call from 424 on alike. */
  if (row->nr != 0)
    {
      *nr = row->nr;
      return 0;
    }
#endif
  return -1;
}

int
bx_bwrap_seccomp_build (void **bpf, size_t *len, bx_error *err)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL)
    return bx_error_setc (err, 0, "%s", bx_xstrdup ("seccomp_init failed"));
  int r = 0;
  for (size_t i = 0; r == 0 && i < bx_seccomp_rule_count; i++)
    {
      const struct bx_seccomp_rule *row = &bx_seccomp_rules[i];
      struct build b = { .ctx = ctx };
      if (native_number (row, &b.nr) < 0)
        {
          /* Refusing to start beats a filter that lets the call through. */
          bx_error_setc (err, 0, "libseccomp does not know the system call %s", row->name);
          seccomp_release (ctx);
          return -1;
        }
      if (b.nr < 0)
        continue;
#if defined(__s390__)
      unsigned arg = row->arg_s390;
#else
      unsigned arg = row->arg;
#endif
      r = bx_seccomp_expand (row, arg, false, add_rule, &b);
      if (r != 0)
        {
          bx_error_set (err, -r, "seccomp_rule_add (%s)", row->name);
          seccomp_release (ctx);
          return -1;
        }
    }

  int fd = memfd_create ("bx-seccomp", MFD_CLOEXEC);
  if (fd < 0 || (r = seccomp_export_bpf (ctx, fd)) != 0)
    {
      bx_error_set (err, fd < 0 ? errno : -r, "cannot export the seccomp filter");
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
      bx_error_setc (err, 0, "cannot read the seccomp filter back");
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

/* SPDX-License-Identifier: Apache-2.0 */
/* The OCI seccomp section every sandbox runs under: the refusals of the seccomp table that
 * podman.so's and bwrap.so's filters are made from, on top of a filter that allows the rest.
 * gVisor's kernel runs the filter on the tool's own system calls, so a setuid bit, an
 * extended attribute or io_uring is refused there before gVisor would carry it to the host
 * through its file proxy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"

#include "gvisor.h"
#include "seccomp_table.h"

struct out
{
  char *text;
};

static int
add_rule (void *ctx, const struct bx_seccomp_rule *row, bool allow,
          const struct bx_seccomp_cmp *cmp)
{
  struct out *o = ctx;
  static const char *const ops[] = {
    [BX_SECCOMP_EQ] = "SCMP_CMP_EQ",
    [BX_SECCOMP_GT] = "SCMP_CMP_GT",
    [BX_SECCOMP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
  };
  cleanup_free char *args
      = cmp == NULL ? bx_xstrdup ("")
                    : bx_xasprintf (", \"args\": [{\"index\": %u, \"value\": %llu, \"valueTwo\": "
                                    "%llu, \"op\": \"%s\"}]",
                                    cmp->arg, (unsigned long long)cmp->a,
                                    (unsigned long long)cmp->b, ops[cmp->op]);
  cleanup_free char *ret
      = allow ? bx_xstrdup ("") : bx_xasprintf (", \"errnoRet\": %d", row->errno_value);
  char *more = bx_xasprintf ("%s%s\n        {\"names\": [\"%s\"], \"action\": \"%s\"%s%s}", o->text,
                             o->text[0] ? "," : "", row->name,
                             allow ? "SCMP_ACT_ALLOW" : "SCMP_ACT_ERRNO", ret, args);
  free (o->text);
  o->text = more;
  return 0;
}

char *
bx_gvisor_seccomp_json (void)
{
  struct out o = { .text = bx_xstrdup ("") };
  for (size_t i = 0; i < bx_seccomp_rule_count; i++)
    /* A row that answers ENOSYS stands for a call the C library can do without (clone3,
     * openat2): gVisor's filter answers EPERM whatever errnoRet says, which would stop glibc
     * falling back from clone3 to clone, so these are left to gVisor's kernel.  io_uring's
     * rows too: the host filters refuse it because a ring's requests pass no filter on the
     * host kernel, and gVisor runs a ring in its own kernel (tests/gvisor/kernel.sh sees
     * io_uring_setup answered there), never on the host's.  Should gVisor's rings ever
     * carry out what the refusals guard (modes, attributes, sockets), these rows must join
     * the filter.  io_setup's row as well: its events are the host's one count for the
     * machine only on the host's kernel, and gVisor's keeps AIO of its own
     * (tests/containment/aio_host_slots.sh). */
    if (bx_seccomp_rules[i].errno_value != ENOSYS)
      bx_seccomp_expand (&bx_seccomp_rules[i], bx_seccomp_rules[i].arg, false, add_rule, &o);
  char *json
      = bx_xasprintf ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": "
                      "[\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_AARCH64\"], \"syscalls\": [%s\n    ]}",
                      o.text);
  free (o.text);
  return json;
}

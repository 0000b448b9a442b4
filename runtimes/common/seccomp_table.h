/* SPDX-License-Identifier: Apache-2.0 */
/* What every sandbox's seccomp filter refuses, written once for every runtime.  bwrap.so adds
 * these rules to a filter that allows everything else (runtimes/bwrap/bwrap_seccomp.c);
 * make-seccomp adds them to podman's default profile, whose allow list it first takes the
 * calls out of (runtimes/podman/make-seccomp.c).  tests/containment/seccomp_probe.c tries
 * every row inside each real runtime and expects each refusal exactly as written here.
 *
 * Besides these, podman's default profile refuses what it refuses (kexec, modules, mount
 * without CAP_SYS_ADMIN, every call it does not know) and bwrap.so's sandbox has no
 * capability; neither is this table's business. */
#ifndef BX_RUNTIME_SECCOMP_TABLE_H
#define BX_RUNTIME_SECCOMP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When a row refuses its system call. */
enum bx_seccomp_when
{
  BX_SECCOMP_ALWAYS,   /* every call */
  BX_SECCOMP_ANY_BIT,  /* the argument has one of the bits of `value` set */
  BX_SECCOMP_LOW32_IS, /* the argument's low 32 bits are `value` (the kernel reads an int) */
  BX_SECCOMP_NOT_IN,   /* the argument is none of `allowed` */
};

#define BX_SECCOMP_MAX_ALLOWED 4

struct bx_seccomp_rule
{
  const char *name; /* the system call, as libseccomp and podman's profile name it */
  /* Its number on every architecture that numbers calls from 424 on alike (x86-64, arm64),
   * for a libseccomp too old to know the name; 0 for older calls. */
  int nr;
  int errno_value; /* what a refused call returns */
  enum bx_seccomp_when when;
  unsigned arg;      /* the argument `when` looks at */
  unsigned arg_s390; /* the same on s390 and s390x, where clone's first two are swapped */
  uint64_t value;
  uint64_t allowed[BX_SECCOMP_MAX_ALLOWED];
  unsigned n_allowed;
  const char *why; /* one line, for people reading the profile or a probe's output */
};

extern const struct bx_seccomp_rule bx_seccomp_rules[];
extern const size_t bx_seccomp_rule_count;

/* One comparison of an argument, as libseccomp and podman's profile write it:
 * EQ: arg == a; GT: arg > a (unsigned, 64 bits); MASKED_EQ: (arg & a) == b. */
enum bx_seccomp_op
{
  BX_SECCOMP_EQ,
  BX_SECCOMP_GT,
  BX_SECCOMP_MASKED_EQ,
};

struct bx_seccomp_cmp
{
  unsigned arg;
  enum bx_seccomp_op op;
  uint64_t a, b;
};

/* Called for each filter rule a row becomes: refuse with errno_value (allow false) or allow
 * (allow true) when CMP holds, or always when CMP is NULL.  A nonzero answer stops. */
typedef int (*bx_seccomp_add_fn) (void *ctx, const struct bx_seccomp_rule *row, bool allow,
                                  const struct bx_seccomp_cmp *cmp);

/* Turns ROW into filter rules on argument ARG (row->arg, or row->arg_s390 on s390): its
 * refusals, and with WITH_ALLOW (for a filter that refuses what it does not allow) the rules
 * allowing exactly the rest of the calls, which never overlap a refusal.  Rules for one call
 * add up in libseccomp (any match decides), and one rule cannot compare one argument twice,
 * so a set is written as one rule per value.  Answers the first nonzero ADD answer, or 0. */
int bx_seccomp_expand (const struct bx_seccomp_rule *row, unsigned arg, bool with_allow,
                       bx_seccomp_add_fn add, void *ctx);

/* Whether ROW refuses a call whose argument ARG_VALUE is the one `when` looks at. */
bool bx_seccomp_refuses (const struct bx_seccomp_rule *row, uint64_t arg_value);

#endif

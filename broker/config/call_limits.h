/* SPDX-License-Identifier: Apache-2.0 */
/* The per-call limits of ABI 1.1 (enum bx_limit in boxmaker/runtime.h) as brokerd's config
 * writes them: one key per limit, in a `limits` mapping at the top of the config (the
 * defaults) and in each grant (its own values).  A limit neither sets is 0: not set, the
 * module's own default applies.  The output cap is the exception: a spec always holds one,
 * at most what a response can carry. */
#ifndef BX_BROKER_CALL_LIMITS_H
#define BX_BROKER_CALL_LIMITS_H

#include <stdint.h>

#include <boxmaker/runtime.h>

/* The config key of limit WHICH ("time", "memory", "pids", "cpus", "output", "file_size"),
 * in enum order; NULL for another WHICH. */
const char *bx_limit_key (int which);
/* What a value of limit WHICH must look like, for a config error. */
const char *bx_limit_expected (int which);
/* Reads TEXT as a value of limit WHICH, in the unit of enum bx_limit (ms, bytes, count,
 * thousandths of a CPU).  0 and *OUT set, -1 when it is malformed or out of range, or
 * BX_LIMIT_NO_UNIT when a duration is a number without its unit (values.h). */
#define BX_LIMIT_NO_UNIT (-2)
int bx_limit_parse (int which, const char *text, uint64_t *out);

/* The value a call gets: the grant's, else the config's default, else 0 (the output cap:
 * else the most a response carries). */
uint64_t bx_limit_for_call (int which, const uint64_t *grant, const uint64_t *defaults);

/* LIMITS (BX_LIMIT_COUNT values) as config keys and values, "time 2000ms, cpus 0.500",
 * newly allocated; NULL when none is set. */
char *bx_limits_describe (const uint64_t *limits);

#endif

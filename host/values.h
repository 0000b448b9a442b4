/* SPDX-License-Identifier: Apache-2.0 */
/* The one grammar for sizes and durations in brokerd's config, the top-level keys and the
 * module options alike:
 *
 *   size      digits, optionally followed by k, m or g (or K, M, G: powers of 1024)
 *   duration  digits followed by ms, s, m or h; or milliseconds as plain digits: in a
 *             module's options always (the runtime ABI's option_duration_ms), in
 *             brokerd's own keys only where the name says so (bx_value_bare_ms_allowed)
 *
 * Each returns 0 with *out set, -1 when S is malformed, -2 when it does not fit in 64 bits.
 * Ranges are the caller's. */
#ifndef BX_BROKER_VALUES_H
#define BX_BROKER_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Plain digits, the N bytes at S, at least one (integers). */
int bx_value_digits (const char *s, size_t n, uint64_t *out);
int bx_value_size (const char *s, uint64_t *out);
int bx_value_duration_ms (const char *s, uint64_t *out);

/* Whether KEY's duration may be plain digits, read as milliseconds: only where the key's
 * name gives the unit ("grace_ms", "shell_ms").  Elsewhere ("time", "approval_timeout") a
 * bare number is refused: "time: 5" meant as seconds would otherwise kill every call after
 * 5 ms. */
bool bx_value_bare_ms_allowed (const char *key);

#endif

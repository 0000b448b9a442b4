/* SPDX-License-Identifier: Apache-2.0 */
/* The one grammar for sizes and durations in brokerd's config, the top-level keys and the
 * module options alike:
 *
 *   size      digits, optionally followed by k, m or g (or K, M, G: powers of 1024)
 *   duration  milliseconds as plain digits, or digits followed by ms, s, m or h
 *
 * Each returns 0 with *out set, -1 when S is malformed, -2 when it does not fit in 64 bits.
 * Ranges are the caller's. */
#ifndef BX_BROKER_VALUES_H
#define BX_BROKER_VALUES_H

#include <stddef.h>
#include <stdint.h>

/* Plain digits, the N bytes at S, at least one (integers). */
int bx_value_digits (const char *s, size_t n, uint64_t *out);
int bx_value_size (const char *s, uint64_t *out);
int bx_value_duration_ms (const char *s, uint64_t *out);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Whole numbers as people type them on a command line. */
#ifndef BX_NUMBER_H
#define BX_NUMBER_H

#include <stdint.h>

/* 0 and *OUT when S is a decimal whole number: digits only (no sign, no spaces), at most
 * UINT64_MAX; -1 otherwise, *OUT unchanged. */
int bx_parse_u64 (const char *s, uint64_t *out);

#endif

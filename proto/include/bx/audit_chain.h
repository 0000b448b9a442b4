/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log's hash chain: what brokerd writes and `boxmaker audit verify` checks.
 *
 * Every audit line is one JSON object whose last member is "prev": the SHA-256, in lowercase
 * hex, of the line before it (its bytes without the newline).  A line removed, inserted or
 * edited breaks the chain at the line after it.  The first line of a new chain carries
 * BX_AUDIT_CHAIN_START (64 zeros).  docs/config.md, "The audit log", says how the chain
 * continues across restarts and rotation. */
#ifndef BX_AUDIT_CHAIN_H
#define BX_AUDIT_CHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "bx/error.h"

#define BX_AUDIT_HASH_HEX    64
#define BX_AUDIT_CHAIN_START "0000000000000000000000000000000000000000000000000000000000000000"

/* SHA-256 of LINE (LEN bytes, no newline) in lowercase hex, NUL-terminated. */
void bx_audit_hash (const char *line, size_t len, char out[BX_AUDIT_HASH_HEX + 1]);

/* The "prev" LINE carries: 0 and OUT filled, or -1 when LINE is not a JSON object whose
 * "prev" is 64 lowercase hex digits. */
int bx_audit_line_prev (const char *line, size_t len, char out[BX_AUDIT_HASH_HEX + 1]);

/* The hash of the last line of the file open at FD (read backwards from its end, whatever
 * its size).  0 and OUT filled; 1 when the file is empty (OUT untouched); -1 when it cannot
 * be read or its last line is longer than BX_AUDIT_LINE_MAX. */
#define BX_AUDIT_LINE_MAX (1024 * 1024)
int bx_audit_last_hash (int fd, char out[BX_AUDIT_HASH_HEX + 1], bx_error *err);

#endif

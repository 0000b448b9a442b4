/* SPDX-License-Identifier: Apache-2.0 */
/* Host names and host patterns: one definition shared by brokerd's grants and the egress
 * proxy, so the two can never disagree about which names a grant allows.
 * The rules are in docs/hosts.md; in short:
 *   - ASCII letters, digits and inner hyphens, labels of 1 to 63, at most 253 characters in
 *     all, no trailing dot; IDNs arrive as xn-- labels;
 *   - never an IP literal in any form: a name whose last label is all digits, or "0x" and
 *     hex digits (a URL parser reads it as a number), is not a host, nor is anything
 *     inet_aton or inet_pton would read as an address;
 *   - compared without regard to case;
 *   - a pattern is a host, or "*." followed by a host; "*.example.com" matches every name
 *     below example.com at any depth, never example.com itself;
 *   - a grant's host may name its ports: "pattern" (port 443 only), "pattern:PORT" (that
 *     port, 1 to 65535, decimal without a leading zero) or "pattern:*" (every port).
 */
#ifndef BX_HOSTS_H
#define BX_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#define BX_HOST_MAX 253

/* NULL is never valid.  The _n forms take bytes that may hold a NUL (from the wire): a NUL
 * anywhere makes the name invalid. */
bool bx_valid_host (const char *name);
bool bx_valid_host_n (const char *name, size_t len);
bool bx_valid_host_pattern (const char *pattern);

/* True when HOST is a valid host and PATTERN (a valid pattern) matches it. */
bool bx_host_matches (const char *pattern, const char *host);

/* The port a host pattern without ":PORT" allows, and a URL without a port names. */
#define BX_HOST_DEFAULT_PORT 443
/* The longest "pattern:PORT": "*." and a host, ':' and five digits. */
#define BX_HOST_PORT_PATTERN_MAX (BX_HOST_MAX + 8)

/* A pattern, alone (port 443) or followed by ":PORT" or ":*". */
bool bx_valid_host_port_pattern (const char *pattern);
/* True when HOST is a valid host, PORT is 1 to 65535, and PATTERN (a valid host and port
 * pattern) allows both. */
bool bx_host_port_matches (const char *pattern, const char *host, unsigned port);
/* Reads "PORT" (LEN bytes): decimal, 1 to 65535, no sign, no leading zero.  0 when it is not
 * a port. */
unsigned bx_port_parse (const char *text, size_t len);

#endif

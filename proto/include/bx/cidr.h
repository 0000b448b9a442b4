/* SPDX-License-Identifier: Apache-2.0 */
/* Address ranges a grant opts into with allow_private (docs/hosts.md, "Private
 * destinations"): one definition for brokerd's config and the egress proxy.
 *
 * A range is an IPv4 or IPv6 address in its one standard form (inet_pton, never inet_aton's
 * 127.1 or 0x7f000001), alone (one address) or followed by "/LEN".  Bits below LEN must be
 * zero, so the text shows exactly what it lets through.  A range never reaches the machine
 * itself or its link: it may not overlap 0.0.0.0/8, 127.0.0.0/8, 169.254.0.0/16, ::/128,
 * ::1/128 or fe80::/10, nor an IPv6 range that carries IPv4 addresses (::/96,
 * ::ffff:0:0/96, 64:ff9b::/96, 2002::/16): name the IPv4 range instead. */
#ifndef BX_CIDR_H
#define BX_CIDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bx/error.h"

/* "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/128" */
#define BX_CIDR_TEXT_MAX 49

struct bx_cidr
{
  int family; /* AF_INET or AF_INET6 */
  uint8_t addr[16];
  unsigned prefix; /* 0..32 or 0..128 */
};

/* 0 and *OUT, or -1 and *ERR naming what is wrong. */
int bx_cidr_parse (const char *text, struct bx_cidr *out, bx_error *err);

/* Whether ADDR (AF_INET or AF_INET6; an IPv4-mapped IPv6 address is read as its IPv4
 * address) lies in RANGE, and is not one of the addresses no range may hold. */
bool bx_cidr_contains (const struct bx_cidr *range, const struct sockaddr *addr);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Which addresses are public: the egress proxy connects only to these.
 * Not public: the local, private, documentation, multicast and reserved ranges, and every range
 * that IANA's IPv4 and IPv6 special-purpose address registries mark as not globally
 * reachable.  IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses
 * are judged by their embedded IPv4 address; the deprecated IPv4-compatible form (::/96),
 * Teredo (2001::/32) and local-use NAT64 (64:ff9b:1::/48) are never public, nor is any IPv6
 * address outside the global unicast space 2000::/3.  docs/hosts.md lists the ranges and their
 * sources. */
#ifndef BX_ADDR_H
#define BX_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>

bool bx_is_public_v4 (const struct in_addr *a);
bool bx_is_public_v6 (const struct in6_addr *a);
/* AF_INET or AF_INET6; any other family is not public. */
bool bx_is_public (const struct sockaddr *sa);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Public addresses: see bx/addr.h and docs/hosts.md for the ranges and their sources.
 * The egress proxy connects only to public addresses, so every doubt here is "not public". */
#include <stdint.h>
#include <string.h>

#include "bx/addr.h"

struct v4_range
{
  uint32_t prefix; /* host order */
  unsigned bits;
};

/* The local, private, documentation, multicast and reserved ranges, then IANA's IPv4
 * special-purpose address registry (the entries not globally reachable); docs/hosts.md gives
 * each range's source.  Globally reachable entries stay public: 192.31.196.0/24 and
 * 192.175.48.0/24 (AS112 DNS sinks), 192.52.193.0/24 (AMT). */
static const struct v4_range v4_not_public[] = {
  { 0x00000000, 8 },  /* 0.0.0.0/8 "this network" */
  { 0x0a000000, 8 },  /* 10.0.0.0/8 private */
  { 0x64400000, 10 }, /* 100.64.0.0/10 shared address space (the tailnet's range) */
  { 0x7f000000, 8 },  /* 127.0.0.0/8 loopback */
  { 0xa9fe0000, 16 }, /* 169.254.0.0/16 link local */
  { 0xac100000, 12 }, /* 172.16.0.0/12 private */
  /* 192.0.0.0/24 IETF protocol assignments.  IANA marks 192.0.0.9/32 and 192.0.0.10/32
   * globally reachable; the whole /24 stays out all the same: nothing an agent fetches over
   * HTTPS lives there. */
  { 0xc0000000, 24 },
  { 0xc0000200, 24 }, /* 192.0.2.0/24 documentation (TEST-NET-1) */
  { 0xc0586300, 24 }, /* 192.88.99.0/24 deprecated 6to4 relay anycast */
  { 0xc0a80000, 16 }, /* 192.168.0.0/16 private */
  { 0xc6120000, 15 }, /* 198.18.0.0/15 benchmarking */
  { 0xc6336400, 24 }, /* 198.51.100.0/24 documentation (TEST-NET-2) */
  { 0xcb007100, 24 }, /* 203.0.113.0/24 documentation (TEST-NET-3) */
  { 0xe0000000, 4 },  /* 224.0.0.0/4 multicast */
  { 0xf0000000, 4 },  /* 240.0.0.0/4 reserved, and 255.255.255.255 broadcast */
};

struct v6_range
{
  uint8_t prefix[16];
  unsigned bits;
};

/* IPv6 is public only inside 2000::/3, the global unicast space IANA allocates from, and there
 * only outside the ranges below.  Everything else is reserved or local, so the rule alone keeps
 * out ::/96 (::, ::1 and the deprecated IPv4-compatible form: never judged by its IPv4 part),
 * fc00::/7, fe80::/10 and ff00::/8, and IANA's 64:ff9b:1::/48 (local-use NAT64), 100::/64
 * (discard-only), 100:0:0:1::/64 (dummy prefix), 5f00::/16 (segment routing SIDs, RFC 9602) and
 * fec0::/10 (deprecated site local), as well as ::ffff:0:0:0/96 (IPv4-translated) and any
 * unallocated prefix a local network might have borrowed.  ::ffff:0:0/96, 64:ff9b::/96 and
 * 2002::/16 never reach this test: they are judged by their IPv4 address first.
 *
 * Inside 2000::/3, the documentation prefixes and IANA's IPv6 special-purpose address registry
 * (the entries not globally reachable) give: */
static const struct v6_range v6_not_public[] = {
  /* 2001::/23 IETF protocol assignments, Teredo (2001::/32) included.  A few sub-blocks are
   * globally reachable anycast or identifier space (PCP and TURN anycast, AMT, AS112,
   * ORCHIDv2, drone remote ID); nothing an agent fetches over HTTPS lives there, so the whole
   * block stays out rather than carving holes. */
  { { 0x20, 0x01, 0x00, 0x00 }, 23 },
  { { 0x20, 0x01, 0x0d, 0xb8 }, 32 }, /* 2001:db8::/32 documentation */
  { { 0x3f, 0xff }, 20 },             /* 3fff::/20 documentation (RFC 9637) */
};

static bool
v4_in (uint32_t addr, const struct v4_range *r)
{
  uint32_t mask = r->bits == 0 ? 0 : 0xffffffffu << (32 - r->bits);
  return (addr & mask) == r->prefix;
}

static bool
v6_in (const uint8_t *addr, const struct v6_range *r)
{
  unsigned full = r->bits / 8, rest = r->bits % 8;
  if (memcmp (addr, r->prefix, full) != 0)
    return false;
  if (rest == 0)
    return true;
  uint8_t mask = (uint8_t)(0xff << (8 - rest));
  return (addr[full] & mask) == r->prefix[full];
}

static bool
public_v4_host_order (uint32_t a)
{
  for (size_t i = 0; i < sizeof v4_not_public / sizeof v4_not_public[0]; i++)
    if (v4_in (a, &v4_not_public[i]))
      return false;
  return true;
}

static uint32_t
be32 (const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool
bx_is_public_v4 (const struct in_addr *a)
{
  if (a == NULL)
    return false;
  return public_v4_host_order (ntohl (a->s_addr));
}

bool
bx_is_public_v6 (const struct in6_addr *a)
{
  if (a == NULL)
    return false;
  const uint8_t *b = a->s6_addr;
  static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };

  /* ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64): the packet goes to a.b.c.d. */
  if (memcmp (b, mapped, 12) == 0 || memcmp (b, nat64, 12) == 0)
    return public_v4_host_order (be32 (b + 12));
  /* 2002:AABB:CCDD::/48 (6to4): the packet is tunnelled to AA.BB.CC.DD. */
  if (b[0] == 0x20 && b[1] == 0x02)
    return public_v4_host_order (be32 (b + 2));

  /* Outside 2000::/3: reserved, local or multicast. */
  if ((b[0] & 0xe0) != 0x20)
    return false;
  for (size_t i = 0; i < sizeof v6_not_public / sizeof v6_not_public[0]; i++)
    if (v6_in (b, &v6_not_public[i]))
      return false;
  return true;
}

bool
bx_is_public (const struct sockaddr *sa)
{
  if (sa == NULL)
    return false;
  if (sa->sa_family == AF_INET)
    return bx_is_public_v4 (&((const struct sockaddr_in *)sa)->sin_addr);
  if (sa->sa_family == AF_INET6)
    return bx_is_public_v6 (&((const struct sockaddr_in6 *)sa)->sin6_addr);
  return false;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Address ranges for allow_private: see bx/cidr.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>

#include "bx/cidr.h"

/* Whether the first BITS bits of A and B are equal. */
static bool
same_prefix (const uint8_t *a, const uint8_t *b, unsigned bits)
{
  unsigned whole = bits / 8, rest = bits % 8;
  if (memcmp (a, b, whole) != 0)
    return false;
  if (rest == 0)
    return true;
  uint8_t mask = (uint8_t)(0xff << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}

static bool
overlaps (const struct bx_cidr *a, const struct bx_cidr *b)
{
  return a->family == b->family
         && same_prefix (a->addr, b->addr, a->prefix < b->prefix ? a->prefix : b->prefix);
}

/* The ranges no grant may open: the machine itself and its link, and the IPv6 forms that
 * carry an IPv4 address (which would reopen those through another spelling). */
static const struct
{
  struct bx_cidr range;
  const char *why;
} never[] = {
  { { AF_INET, { 0 }, 8 }, "it overlaps 0.0.0.0/8, which reaches this machine" },
  { { AF_INET, { 127 }, 8 }, "it overlaps the loopback range 127.0.0.0/8" },
  { { AF_INET, { 169, 254 }, 16 }, "it overlaps the link-local range 169.254.0.0/16" },
  { { AF_INET6, { 0 }, 96 },
    "it overlaps ::/96 (unspecified, loopback, IPv4-compatible): expected an IPv4 range" },
  { { AF_INET6, { [10] = 0xff, [11] = 0xff }, 96 },
    "it overlaps the IPv4-mapped range ::ffff:0:0/96: expected an IPv4 range" },
  { { AF_INET6, { 0, 0x64, 0xff, 0x9b }, 96 },
    "it overlaps the NAT64 range 64:ff9b::/96: expected an IPv4 range" },
  { { AF_INET6, { 0x20, 0x02 }, 16 },
    "it overlaps the 6to4 range 2002::/16: expected an IPv4 range" },
  { { AF_INET6, { 0xfe, 0x80 }, 10 }, "it overlaps the link-local range fe80::/10" },
};

int
bx_cidr_parse (const char *text, struct bx_cidr *out, bx_error *err)
{
  memset (out, 0, sizeof *out);
  size_t len = text ? strnlen (text, BX_CIDR_TEXT_MAX + 1) : 0;
  if (len == 0 || len > BX_CIDR_TEXT_MAX)
    {
      return bx_error_setc (
          err, EINVAL,
          "expected an IP address, or an address and a prefix length such as 10.0.0.0/8");
    }
  char addr[BX_CIDR_TEXT_MAX + 1];
  const char *slash = strchr (text, '/');
  size_t alen = slash ? (size_t)(slash - text) : len;
  memcpy (addr, text, alen);
  addr[alen] = '\0';
  if (inet_pton (AF_INET, addr, out->addr) == 1)
    out->family = AF_INET;
  else if (inet_pton (AF_INET6, addr, out->addr) == 1)
    out->family = AF_INET6;
  else
    {
      return bx_error_setc (
          err, EINVAL,
          "expected an IP address, or an address and a prefix length such as 10.0.0.0/8");
    }
  unsigned max = out->family == AF_INET ? 32 : 128;
  out->prefix = max;
  if (slash != NULL)
    {
      const char *p = slash + 1;
      size_t plen = strlen (p);
      unsigned n = 0;
      bool ok = plen >= 1 && plen <= 3 && (p[0] != '0' || plen == 1);
      for (size_t i = 0; ok && i < plen; i++)
        {
          ok = p[i] >= '0' && p[i] <= '9';
          n = n * 10 + (unsigned)(p[i] - '0');
        }
      if (!ok || n > max)
        {
          return bx_error_setc (err, EINVAL, "%s",
                                out->family == AF_INET ? "the prefix length is not 0 to 32"
                                                       : "the prefix length is not 0 to 128");
        }
      out->prefix = n;
    }
  if (out->prefix < max)
    {
      /* Every bit below the prefix must be zero. */
      struct bx_cidr self = *out;
      for (unsigned bit = out->prefix; bit < max; bit++)
        self.addr[bit / 8] &= (uint8_t) ~(0x80 >> (bit % 8));
      if (memcmp (self.addr, out->addr, sizeof self.addr) != 0)
        {
          return bx_error_setc (err, EINVAL, "it has address bits set below its prefix length");
        }
    }
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
    if (overlaps (out, &never[i].range))
      {
        return bx_error_setc (err, EINVAL, "%s", never[i].why);
      }
  return 0;
}

bool
bx_cidr_contains (const struct bx_cidr *range, const struct sockaddr *sa)
{
  struct bx_cidr one = { 0 };
  if (sa->sa_family == AF_INET)
    {
      one.family = AF_INET;
      one.prefix = 32;
      memcpy (one.addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    }
  else if (sa->sa_family == AF_INET6)
    {
      const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
      if (IN6_IS_ADDR_V4MAPPED (a6))
        {
          one.family = AF_INET;
          one.prefix = 32;
          memcpy (one.addr, a6->s6_addr + 12, 4);
        }
      else
        {
          one.family = AF_INET6;
          one.prefix = 128;
          memcpy (one.addr, a6->s6_addr, 16);
        }
    }
  else
    return false;
  /* Config refuses such ranges; the proxy checks again, whatever its --allow-private says. */
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
    if (overlaps (&one, &never[i].range))
      return false;
  return range->family == one.family && range->prefix <= (one.family == AF_INET ? 32u : 128u)
         && same_prefix (range->addr, one.addr, range->prefix);
}

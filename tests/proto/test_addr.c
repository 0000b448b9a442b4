/* SPDX-License-Identifier: Apache-2.0 */
/* Public addresses (bx/addr.h): both edges of every range that is not public, the neighbours
 * just outside each, and the embedded IPv4 forms (mapped, NAT64, 6to4). */
#include <arpa/inet.h>
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/addr.h"
#include "table.h"
#include "test_main.h"

static const struct
{
  const char *addr;
  bool public;
} v4_table[] = {
  /* 0.0.0.0/8 */
  { "0.0.0.0", false },
  { "0.255.255.255", false },
  { "1.0.0.0", true },
  /* 10.0.0.0/8 */
  { "9.255.255.255", true },
  { "10.0.0.0", false },
  { "10.255.255.255", false },
  { "11.0.0.0", true },
  /* 100.64.0.0/10 */
  { "100.63.255.255", true },
  { "100.64.0.0", false },
  { "100.100.100.100", false },
  { "100.127.255.255", false },
  { "100.128.0.0", true },
  /* 127.0.0.0/8 */
  { "126.255.255.255", true },
  { "127.0.0.0", false },
  { "127.0.0.1", false },
  { "127.255.255.255", false },
  { "128.0.0.0", true },
  /* 169.254.0.0/16 */
  { "169.253.255.255", true },
  { "169.254.0.0", false },
  { "169.254.169.254", false },
  { "169.254.255.255", false },
  { "169.255.0.0", true },
  /* 172.16.0.0/12 */
  { "172.15.255.255", true },
  { "172.16.0.0", false },
  { "172.31.255.255", false },
  { "172.32.0.0", true },
  /* 192.0.0.0/24, whole, .9 and .10 included (docs/hosts.md says why) */
  { "191.255.255.255", true },
  { "192.0.0.0", false },
  { "192.0.0.9", false },
  { "192.0.0.10", false },
  { "192.0.0.255", false },
  /* 192.0.2.0/24 TEST-NET-1 */
  { "192.0.1.255", true },
  { "192.0.2.0", false },
  { "192.0.2.255", false },
  { "192.0.3.0", true },
  /* 192.31.196.0/24 AS112, 192.52.193.0/24 AMT, 192.175.48.0/24 AS112: globally reachable */
  { "192.31.196.0", true },
  { "192.31.196.255", true },
  { "192.52.193.0", true },
  { "192.52.193.255", true },
  { "192.175.48.0", true },
  { "192.175.48.255", true },
  /* 192.88.99.0/24 deprecated 6to4 relay anycast */
  { "192.88.98.255", true },
  { "192.88.99.0", false },
  { "192.88.99.255", false },
  { "192.88.100.0", true },
  /* 192.168.0.0/16 */
  { "192.167.255.255", true },
  { "192.168.0.0", false },
  { "192.168.255.255", false },
  { "192.169.0.0", true },
  /* 198.18.0.0/15 */
  { "198.17.255.255", true },
  { "198.18.0.0", false },
  { "198.19.255.255", false },
  { "198.20.0.0", true },
  /* 198.51.100.0/24 TEST-NET-2 */
  { "198.51.99.255", true },
  { "198.51.100.0", false },
  { "198.51.100.255", false },
  { "198.51.101.0", true },
  /* 203.0.113.0/24 TEST-NET-3 */
  { "203.0.112.255", true },
  { "203.0.113.0", false },
  { "203.0.113.255", false },
  { "203.0.114.0", true },
  /* 224.0.0.0/4 multicast, then 240.0.0.0/4 reserved up to 255.255.255.255 */
  { "223.255.255.255", true },
  { "224.0.0.0", false },
  { "239.255.255.255", false },
  { "240.0.0.0", false },
  { "255.255.255.254", false },
  { "255.255.255.255", false },
  /* Ordinary public addresses. */
  { "8.8.8.8", true },
  { "1.1.1.1", true },
  { "93.184.216.34", true },
  { "100.0.0.1", true },
  { "172.217.0.1", true },
  { "192.0.1.1", true },
  { "198.51.0.1", true },
};

static int
v4_row (size_t row)
{
  const char *addr = v4_table[row].addr;
  bool want = v4_table[row].public;
  const char *says = want ? "public" : "not public";
  struct in_addr a;
  EXPECT (inet_pton (AF_INET, addr, &a) == 1, "bad table entry %s", addr);
  EXPECT (bx_is_public_v4 (&a) == want, "%s should be %s", addr, says);
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = a, .sin_port = htons (443) };
  EXPECT (bx_is_public ((struct sockaddr *)&sin) == want, "sockaddr %s should be %s", addr, says);

  /* The same address as IPv4-mapped, NAT64 and 6to4 (2002:AABB:CCDD::1) IPv6 is judged the
   * same way. */
  const uint8_t *b = (const uint8_t *)&a.s_addr;
  char text[64];
  struct in6_addr a6;
  static const char *const forms[] = { "::ffff:%s", "64:ff9b::%s" };
  for (size_t f = 0; f < N (forms); f++)
    {
      snprintf (text, sizeof text, forms[f], addr);
      EXPECT (inet_pton (AF_INET6, text, &a6) == 1, "bad address %s", text);
      EXPECT (bx_is_public_v6 (&a6) == want, "%s should be %s", text, says);
    }
  snprintf (text, sizeof text, "2002:%02x%02x:%02x%02x::1", b[0], b[1], b[2], b[3]);
  EXPECT (inet_pton (AF_INET6, text, &a6) == 1, "bad address %s", text);
  EXPECT (bx_is_public_v6 (&a6) == want, "%s should be %s", text, says);

  /* The deprecated IPv4-compatible form ::a.b.c.d is never public: it lies in ::/96. */
  snprintf (text, sizeof text, "::%s", addr);
  EXPECT (inet_pton (AF_INET6, text, &a6) == 1, "bad address %s", text);
  EXPECT (!bx_is_public_v6 (&a6), "%s should not be public", text);
  return 0;
}

START_TEST (test_is_public_v4_follows_the_table)
{
  RUN_TABLE (v4_table, v4_row);
}
END_TEST

static const struct
{
  const char *addr;
  bool public;
} v6_table[] = {
  /* ::/96: ::, ::1, IPv4-compatible; and the rest of ::/8 */
  { "::", false },
  { "::1", false },
  { "::2", false },
  { "::ffff", false },
  { "::8.8.8.8", false },
  { "::ffff:ffff", false },
  { "::1:0:0", false },
  { "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  /* ::ffff:0:0/96 mapped: judged by IPv4; its neighbours are not public */
  { "::fffe:ffff:ffff", false },
  { "::ffff:0.0.0.0", false },
  { "::ffff:8.8.8.8", true },
  { "::ffff:255.255.255.255", false },
  { "::1:0:0:0", false },
  /* ::ffff:0:0:0/96 IPv4-translated: not judged by IPv4 */
  { "::ffff:0:8.8.8.8", false },
  /* 64:ff9b::/96 NAT64: judged by IPv4; its neighbours are not public */
  { "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "64:ff9b::", false },
  { "64:ff9b::8.8.8.8", true },
  { "64:ff9b::10.0.0.1", false },
  { "64:ff9b::ffff:ffff", false },
  { "64:ff9b::1:0:0", false },
  { "64:ff9b:0:0:1::", false },
  /* 64:ff9b:1::/48 local-use NAT64 */
  { "64:ff9b:0:ffff:ffff:ffff:ffff:ffff", false },
  { "64:ff9b:1::", false },
  { "64:ff9b:1::8.8.8.8", false },
  { "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", false },
  { "64:ff9b:2::", false },
  /* 100::/64 discard-only, 100:0:0:1::/64 dummy prefix */
  { "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "100::", false },
  { "100::ffff:ffff:ffff:ffff", false },
  { "100:0:0:1::", false },
  { "100:0:0:1:ffff:ffff:ffff:ffff", false },
  { "100:0:0:2::", false },
  /* 2000::/3 global unicast: its edges and what is just outside */
  { "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "2000::", true },
  { "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true },
  { "4000::", false },
  /* 2001::/23 IETF protocol assignments, Teredo and the sub-blocks included */
  { "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true },
  { "2001::", false },
  { "2001::1", false },
  { "2001:0:4136:e378:8000:63bf:3fff:fdd2", false },
  { "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "2001:1::1", false },
  { "2001:2::", false },
  { "2001:3::", false },
  { "2001:4:112::", false },
  { "2001:10::", false },
  { "2001:20::", false },
  { "2001:30::", false },
  { "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "2001:200::", true },
  /* 2001:db8::/32 documentation */
  { "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", true },
  { "2001:db8::", false },
  { "2001:db8::1", false },
  { "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "2001:db9::", true },
  /* 2002::/16 6to4: judged by the IPv4 address in bits 16 to 48 */
  { "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true },
  { "2002::", false },
  { "2002:808:808::", true },
  { "2002:808:808:ffff:ffff:ffff:ffff:ffff", true },
  { "2002:a00:1::", false },
  { "2002:7f00:1::1", false },
  { "2002:c0a8:101::1", false },
  { "2002:6440:1::1", false },
  { "2002:c058:6301::1", false },
  { "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "2003::", true },
  /* 2620:4f:8000::/48 AS112 direct delegation: globally reachable */
  { "2620:4f:8000::", true },
  /* 3fff::/20 documentation */
  { "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true },
  { "3fff::", false },
  { "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "3fff:1000::", true },
  /* 5f00::/16 segment routing SIDs */
  { "5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "5f00::", false },
  { "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "5f01::", false },
  /* fc00::/7 unique local (the tailnet's fd7a:115c:a1e0::/48 among them) */
  { "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "fc00::", false },
  { "fd7a:115c:a1e0::1", false },
  { "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  /* fe80::/10 link local, fec0::/10 site local */
  { "fe00::", false },
  { "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "fe80::", false },
  { "fe80::1", false },
  { "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  { "fec0::", false },
  { "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  /* ff00::/8 multicast */
  { "ff00::", false },
  { "ff02::1", false },
  { "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false },
  /* Ordinary public addresses. */
  { "2606:4700:4700::1111", true },
  { "2a00:1450:4001:82a::200e", true },
  { "2001:4860:4860::8888", true },
  { "2400:cb00::1", true },
};

static int
v6_row (size_t row)
{
  const char *addr = v6_table[row].addr;
  bool want = v6_table[row].public;
  struct in6_addr a;
  EXPECT (inet_pton (AF_INET6, addr, &a) == 1, "bad table entry %s", addr);
  EXPECT (bx_is_public_v6 (&a) == want, "%s should be %s", addr, want ? "public" : "not public");
  struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = a, .sin6_port = htons (443) };
  EXPECT (bx_is_public ((struct sockaddr *)&sin6) == want, "sockaddr %s should be %s", addr,
          want ? "public" : "not public");
  return 0;
}

START_TEST (test_is_public_v6_follows_the_table)
{
  RUN_TABLE (v6_table, v6_row);
}
END_TEST

START_TEST (test_is_public_refuses_other_families_and_null)
{
  ck_assert (!bx_is_public (NULL));
  ck_assert (!bx_is_public_v4 (NULL));
  ck_assert (!bx_is_public_v6 (NULL));
  struct sockaddr_storage ss;
  memset (&ss, 0, sizeof ss);
  ss.ss_family = AF_UNIX;
  ck_assert (!bx_is_public ((struct sockaddr *)&ss));
  ss.ss_family = AF_UNSPEC;
  ck_assert (!bx_is_public ((struct sockaddr *)&ss));
}
END_TEST

/* Every /8 of IPv4 once, against an independent reading of the list: a slip in a prefix
 * constant that the edge table misses would show here. */
START_TEST (test_is_public_v4_agrees_with_the_list_for_every_first_octet)
{
  for (unsigned o = 0; o < 256; o++)
    {
      struct in_addr a = { .s_addr = htonl (o << 24 | 0x00050505) };
      bool expect = !(o == 0 || o == 10 || o == 127 || o >= 224);
      ck_assert_msg (bx_is_public_v4 (&a) == expect, "%u.5.5.5", o);
    }
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("proto_addr");
  TCase *tc = tcase_create ("addr");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_is_public_v4_follows_the_table);
  tcase_add_test (tc, test_is_public_v6_follows_the_table);
  tcase_add_test (tc, test_is_public_refuses_other_families_and_null);
  tcase_add_test (tc, test_is_public_v4_agrees_with_the_list_for_every_first_octet);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/* allow_private's address ranges (bx/cidr.h, docs/hosts.md): which ranges a grant may name,
 * and which addresses each lets through. */
#include <arpa/inet.h>
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cidr.h"
#include "bx/cleanup.h"
#include "table.h"

static const struct
{
  const char *text;
  const char *why; /* NULL: valid */
} parse_table[] = {
  { "10.0.0.0/8", NULL },
  { "10.1.2.3", NULL },
  { "10.1.2.3/32", NULL },
  { "192.168.0.0/16", NULL },
  { "172.16.0.0/12", NULL },
  { "100.64.0.0/10", NULL },
  { "8.8.8.0/24", NULL },
  { "fd00::/8", NULL },
  { "fd7a:115c:a1e0::/48", NULL },
  { "fd00::1", NULL },
  { "2001:db8::/32", NULL },
  { "200.0.0.0/5", NULL },
  { "128.0.0.0/1", "it overlaps the link-local range 169.254.0.0/16" },
  { "170.0.0.0/8", NULL },
  /* Not an address in its one standard form. */
  { "", "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  { "10/8", "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  { "10.1/16", "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  { "0x0a000000/8",
    "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  { "010.0.0.0/8", "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  { "registry.internal",
    "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  { "[fd00::]/8", "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  { " 10.0.0.0/8", "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  { "fe80::1%eth0",
    "expected an IP address, or an address and a prefix length such as 10.0.0.0/8" },
  /* Prefix lengths. */
  { "10.0.0.0/", "the prefix length is not 0 to 32" },
  { "10.0.0.0/33", "the prefix length is not 0 to 32" },
  { "10.0.0.0/08", "the prefix length is not 0 to 32" },
  { "10.0.0.0/-8", "the prefix length is not 0 to 32" },
  { "10.0.0.0/8/8", "the prefix length is not 0 to 32" },
  { "10.0.0.0/ 8", "the prefix length is not 0 to 32" },
  { "fd00::/129", "the prefix length is not 0 to 128" },
  { "fd00::/1000", "the prefix length is not 0 to 128" },
  /* Nothing wider than written. */
  { "10.0.0.1/8", "it has address bits set below its prefix length" },
  { "192.168.1.0/16", "it has address bits set below its prefix length" },
  { "fd00::1/64", "it has address bits set below its prefix length" },
  /* Never the machine itself or its link, in any spelling. */
  { "0.0.0.0/0", "it overlaps 0.0.0.0/8, which reaches this machine" },
  { "0.0.0.0", "it overlaps 0.0.0.0/8, which reaches this machine" },
  { "0.0.0.0/7", "it overlaps 0.0.0.0/8, which reaches this machine" },
  { "127.0.0.1", "it overlaps the loopback range 127.0.0.0/8" },
  { "127.0.0.0/8", "it overlaps the loopback range 127.0.0.0/8" },
  { "126.0.0.0/7", "it overlaps the loopback range 127.0.0.0/8" },
  { "64.0.0.0/2", "it overlaps the loopback range 127.0.0.0/8" },
  { "169.254.169.254", "it overlaps the link-local range 169.254.0.0/16" },
  { "168.0.0.0/6", "it overlaps the link-local range 169.254.0.0/16" },
  { "::1", "it overlaps ::/96 (unspecified, loopback, IPv4-compatible): expected an IPv4 range" },
  { "::", "it overlaps ::/96 (unspecified, loopback, IPv4-compatible): expected an IPv4 range" },
  { "::/0", "it overlaps ::/96 (unspecified, loopback, IPv4-compatible): expected an IPv4 range" },
  { "::ffff:10.0.0.0/104",
    "it overlaps the IPv4-mapped range ::ffff:0:0/96: expected an IPv4 range" },
  { "::ffff:127.0.0.1", "it overlaps the IPv4-mapped range ::ffff:0:0/96: expected an IPv4 range" },
  { "64:ff9b::a00:1", "it overlaps the NAT64 range 64:ff9b::/96: expected an IPv4 range" },
  { "2002:7f00:1::/48", "it overlaps the 6to4 range 2002::/16: expected an IPv4 range" },
  { "2000::/3", "it overlaps the 6to4 range 2002::/16: expected an IPv4 range" },
  { "fe80::/10", "it overlaps the link-local range fe80::/10" },
  { "fe80::1", "it overlaps the link-local range fe80::/10" },
  { "fe00::/7", "it overlaps the link-local range fe80::/10" },
};

static int
parse_row (size_t row)
{
  struct bx_cidr c;
  cleanup_error bx_error err = NULL;
  int r = bx_cidr_parse (parse_table[row].text, &c, &err);
  const char *why = bx_error_msg (err);
  if (parse_table[row].why == NULL)
    EXPECT (r == 0, "\"%s\" refused: %s", parse_table[row].text, why);
  else
    {
      EXPECT (r < 0, "\"%s\" accepted", parse_table[row].text);
      EXPECT (strcmp (why, parse_table[row].why) == 0, "\"%s\": \"%s\", expected \"%s\"",
              parse_table[row].text, why, parse_table[row].why);
    }
  return 0;
}

START_TEST (test_cidr_parse_follows_the_table)
{
  RUN_TABLE (parse_table, parse_row);
  struct bx_cidr c;
  cleanup_error bx_error why = NULL;
  ck_assert_int_lt (bx_cidr_parse (NULL, &c, &why), 0);
  bx_error_free (&why);
  ck_assert_int_lt (bx_cidr_parse ("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/1280", &c, &why),
                    0);
}
END_TEST

static bool
contains (const char *range, const char *address)
{
  struct bx_cidr c;
  cleanup_error bx_error why = NULL;
  ck_assert_msg (bx_cidr_parse (range, &c, &why) == 0, "%s: %s", range, bx_error_msg (why));
  struct sockaddr_storage ss = { 0 };
  if (inet_pton (AF_INET, address, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
    ss.ss_family = AF_INET;
  else
    {
      ck_assert_int_eq (inet_pton (AF_INET6, address, &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
      ss.ss_family = AF_INET6;
    }
  return bx_cidr_contains (&c, (struct sockaddr *)&ss);
}

static const struct
{
  const char *range, *address;
  bool in;
} contains_table[] = {
  { "10.0.0.0/8", "10.0.0.0", true },
  { "10.0.0.0/8", "10.255.255.255", true },
  { "10.0.0.0/8", "11.0.0.0", false },
  { "10.0.0.0/8", "9.255.255.255", false },
  { "10.1.2.3", "10.1.2.3", true },
  { "10.1.2.3", "10.1.2.4", false },
  { "172.16.0.0/12", "172.31.255.255", true },
  { "172.16.0.0/12", "172.32.0.0", false },
  /* An IPv4-mapped answer is judged as its IPv4 address. */
  { "10.0.0.0/8", "::ffff:10.1.2.3", true },
  { "10.0.0.0/8", "::ffff:11.1.2.3", false },
  /* The NAT64 form is another destination (the translator), not the IPv4 range. */
  { "10.0.0.0/8", "64:ff9b::a01:203", false },
  { "fd00::/8", "fd12::1", true },
  { "fd00::/8", "fe00::1", false },
  { "fd00::/8", "10.0.0.1", false },
  { "10.0.0.0/8", "fd00::1", false },
  { "200.0.0.0/5", "207.255.255.255", true },
  { "200.0.0.0/5", "208.0.0.0", false },
};

static int
contains_row (size_t row)
{
  EXPECT (contains (contains_table[row].range, contains_table[row].address)
              == contains_table[row].in,
          "%s in %s should be %s", contains_table[row].address, contains_table[row].range,
          contains_table[row].in ? "true" : "false");
  return 0;
}

START_TEST (test_cidr_contains_follows_the_table)
{
  RUN_TABLE (contains_table, contains_row);
}
END_TEST

START_TEST (test_cidr_contains_never_lets_loopback_through_a_forged_range)
{
  /* The proxy checks again: a range built by hand (not parsed) that covers everything still
   * holds neither loopback nor link-local. */
  struct bx_cidr all4 = { .family = AF_INET, .prefix = 0 };
  struct bx_cidr all6 = { .family = AF_INET6, .prefix = 0 };
  const char *never[]
      = { "127.0.0.1", "0.0.0.0", "169.254.169.254", "::1", "::", "fe80::1", "::ffff:127.0.0.1" };
  for (size_t i = 0; i < N (never); i++)
    {
      struct sockaddr_storage ss = { 0 };
      if (inet_pton (AF_INET, never[i], &((struct sockaddr_in *)&ss)->sin_addr) == 1)
        ss.ss_family = AF_INET;
      else
        {
          inet_pton (AF_INET6, never[i], &((struct sockaddr_in6 *)&ss)->sin6_addr);
          ss.ss_family = AF_INET6;
        }
      ck_assert_msg (!bx_cidr_contains (&all4, (struct sockaddr *)&ss), "%s", never[i]);
      ck_assert_msg (!bx_cidr_contains (&all6, (struct sockaddr *)&ss), "%s", never[i]);
    }
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("proto_cidr");
  TCase *tc = tcase_create ("cidr");
  tcase_add_test (tc, test_cidr_parse_follows_the_table);
  tcase_add_test (tc, test_cidr_contains_follows_the_table);
  tcase_add_test (tc, test_cidr_contains_never_lets_loopback_through_a_forged_range);
  suite_add_tcase (s, tc);
  SRunner *sr = srunner_create (s);
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

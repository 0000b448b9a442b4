/* SPDX-License-Identifier: Apache-2.0 */
/* Host names and patterns (bx/hosts.h, docs/hosts.md): tables of names a model or an owner
 * might write, and what each must give. */
#include <arpa/inet.h>
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/hosts.h"
#include "table.h"
#include "test_main.h"

static const struct
{
  const char *name;
  bool valid;
} host_table[] = {
  /* Plain names. */
  { "example.com", true },
  { "a", true },
  { "com", true },
  { "localhost", true },
  { "www.example.com", true },
  { "a.b.c.d.e.f.g", true },
  { "a-b.example", true },
  { "a--b.example", true },
  { "xn--bcher-kva.example", true },
  { "EXAMPLE.COM", true },
  { "MiXeD.CaSe.Org", true },
  { "1a.example", true },
  { "123.example", true },
  { "1.2.3.example", true },
  { "example.123a", true },
  { "example.a123", true },
  { "example.0xg", true },
  { "0xg", true },
  { "x0x1", true },
  { "1e100", true },
  { "1e100.net", true },
  { "0x1.example", true },
  /* Not names: syntax. */
  { "", false },
  { ".", false },
  { "..", false },
  { "example.com.", false },
  { ".example.com", false },
  { "a..b", false },
  { "-a.example", false },
  { "a-.example", false },
  { "a.-b.example", false },
  { "a.b-.example", false },
  { "-", false },
  { "a_b.example", false },
  { "a b.example", false },
  { " example.com", false },
  { "example.com ", false },
  { "example.com\n", false },
  { "ex@mple.com", false },
  { "example.com:443", false },
  { "example.com/path", false },
  { "user@example.com", false },
  { "*.example.com", false },
  { "*", false },
  { "b\xc3\xbc"
    "cher.example",
    false },
  { "\xff.example", false },
  { "example.com\\", false },
  /* Not names: IP literals in every form glibc's resolver or a URL parser reads. */
  { "127.0.0.1", false },
  { "0.0.0.0", false },
  { "1.2.3.4", false },
  { "255.255.255.255", false },
  { "127.1", false },
  { "127.0.1", false },
  { "0x7f000001", false },
  { "0X7F000001", false },
  { "0x7f.0.0.1", false },
  { "0x7f.1", false },
  { "0177.0.0.1", false },
  { "017700000001", false },
  { "2130706433", false },
  { "0", false },
  { "1", false },
  { "0x", false },
  { "0X", false },
  { "0xffffffff", false },
  { "example.123", false },
  { "example.0", false },
  { "a.b.c.1", false },
  { "1.2.3.4.5", false },
  { "example.0x", false },
  { "example.0x1f", false },
  { "example.0XaBc", false },
  { "::1", false },
  { "[::1]", false },
  { "::ffff:127.0.0.1", false },
  { "fe80::1", false },
  { "2001:db8::1", false },
};

static int
host_row (size_t row)
{
  const char *name = host_table[row].name;
  bool want = host_table[row].valid;
  EXPECT (bx_valid_host (name) == want, "bx_valid_host (\"%s\") should be %s", name,
          want ? "true" : "false");
  EXPECT (bx_valid_host_n (name, strlen (name)) == want, "bx_valid_host_n (\"%s\") should be %s",
          name, want ? "true" : "false");
  return 0;
}

START_TEST (test_valid_host_follows_the_table)
{
  RUN_TABLE (host_table, host_row);
}
END_TEST

START_TEST (test_valid_host_refuses_null)
{
  ck_assert (!bx_valid_host (NULL));
  ck_assert (!bx_valid_host_n (NULL, 0));
  ck_assert (!bx_valid_host_n (NULL, 5));
  ck_assert (!bx_valid_host_pattern (NULL));
  ck_assert (!bx_host_matches (NULL, "example.com"));
  ck_assert (!bx_host_matches ("example.com", NULL));
}
END_TEST

START_TEST (test_valid_host_n_refuses_an_embedded_nul)
{
  ck_assert (!bx_valid_host_n ("example.com\0evil.net", 20));
  ck_assert (!bx_valid_host_n ("\0", 1));
  ck_assert (!bx_valid_host_n ("example.com\0", 12));
  ck_assert (bx_valid_host_n ("example.com", 11));
  /* Only LEN bytes count: a prefix of a longer buffer is judged alone. */
  ck_assert (bx_valid_host_n ("example.comX", 11));
  ck_assert (!bx_valid_host_n ("example.com", 0));
  ck_assert (!bx_valid_host_n ("127.0.0.1xyz", 9));
}
END_TEST

static char *
repeat (char c, size_t n)
{
  char *s = malloc (n + 1);
  memset (s, c, n);
  s[n] = '\0';
  return s;
}

START_TEST (test_valid_host_allows_labels_of_63_and_not_64)
{
  char *l63 = repeat ('a', 63), *l64 = repeat ('a', 64);
  char buf[200];
  snprintf (buf, sizeof buf, "%s.example", l63);
  ck_assert (bx_valid_host (buf));
  snprintf (buf, sizeof buf, "%s.example", l64);
  ck_assert (!bx_valid_host (buf));
  snprintf (buf, sizeof buf, "example.%s", l63);
  ck_assert (bx_valid_host (buf));
  snprintf (buf, sizeof buf, "example.%s", l64);
  ck_assert (!bx_valid_host (buf));
  ck_assert (bx_valid_host (l63));
  ck_assert (!bx_valid_host (l64));
  free (l63);
  free (l64);
}
END_TEST

START_TEST (test_valid_host_allows_253_characters_and_not_254)
{
  char *l63 = repeat ('a', 63), *l61 = repeat ('b', 61), *l62 = repeat ('b', 62);
  char buf[300];
  snprintf (buf, sizeof buf, "%s.%s.%s.%s", l63, l63, l63, l61);
  ck_assert_uint_eq (strlen (buf), 253);
  ck_assert (bx_valid_host (buf));
  ck_assert (bx_valid_host_n (buf, 253));
  snprintf (buf, sizeof buf, "%s.%s.%s.%s", l63, l63, l63, l62);
  ck_assert_uint_eq (strlen (buf), 254);
  ck_assert (!bx_valid_host (buf));
  ck_assert (!bx_valid_host_n (buf, 254));
  free (l63);
  free (l61);
  free (l62);
}
END_TEST

START_TEST (test_valid_host_refuses_a_very_long_string)
{
  char *s = repeat ('a', 100000);
  ck_assert (!bx_valid_host (s));
  ck_assert (!bx_valid_host_pattern (s));
  free (s);
}
END_TEST

/* Every string inet_aton or inet_pton reads as an address is refused, whatever the syntax
 * rules would say: a generated set of numeric-looking forms. */
START_TEST (test_valid_host_refuses_whatever_inet_aton_reads)
{
  static const char *parts[]
      = { "0",  "1",  "127",        "255",        "256",        "0x7f", "0X7F", "0177",
          "08", "0x", "4294967295", "4294967296", "0xffffffff", "00",   "9" };
  char buf[128];
  int checked = 0;
  for (size_t a = 0; a < N (parts); a++)
    for (size_t b = 0; b < N (parts); b++)
      for (int shape = 0; shape < 4; shape++)
        {
          switch (shape)
            {
            case 0:
              snprintf (buf, sizeof buf, "%s", parts[a]);
              break;
            case 1:
              snprintf (buf, sizeof buf, "%s.%s", parts[a], parts[b]);
              break;
            case 2:
              snprintf (buf, sizeof buf, "%s.0.%s", parts[a], parts[b]);
              break;
            default:
              snprintf (buf, sizeof buf, "%s.%s.0.%s", parts[b], parts[a], parts[b]);
              break;
            }
          struct in_addr addr;
          if (inet_aton (buf, &addr) != 0)
            {
              ck_assert_msg (!bx_valid_host (buf), "\"%s\" is an address to inet_aton", buf);
              checked++;
            }
        }
  ck_assert_int_gt (checked, 100);
}
END_TEST

static const struct
{
  const char *pattern;
  bool valid;
} pattern_table[] = {
  { "example.com", true },
  { "*.example.com", true },
  { "*.com", true },
  { "*.EXAMPLE.Com", true },
  { "*.a.b.c.example", true },
  { "*.xn--bcher-kva.example", true },
  { "", false },
  { "*", false },
  { "*.", false },
  { "*..example.com", false },
  { "**.example.com", false },
  { "*example.com", false },
  { "*-example.com", false },
  { "a*.example.com", false },
  { "a.*.example.com", false },
  { "example.*", false },
  { "*.*.example.com", false },
  { "*.example.com.", false },
  { " *.example.com", false },
  { "*. example.com", false },
  { ".example.com", false },
  { "*.127.0.0.1", false },
  { "*.0.1", false },
  { "*.0x7f000001", false },
  { "*.example.123", false },
  { "127.0.0.1", false },
  { "0x7f000001", false },
  { "*.::1", false },
  { "?.example.com", false },
  { "%.example.com", false },
};

static int
pattern_row (size_t row)
{
  EXPECT (bx_valid_host_pattern (pattern_table[row].pattern) == pattern_table[row].valid,
          "bx_valid_host_pattern (\"%s\") should be %s", pattern_table[row].pattern,
          pattern_table[row].valid ? "true" : "false");
  return 0;
}

START_TEST (test_valid_host_pattern_follows_the_table)
{
  RUN_TABLE (pattern_table, pattern_row);
}
END_TEST

static const struct
{
  const char *pattern;
  const char *host;
  bool match;
} match_table[] = {
  { "example.com", "example.com", true },
  { "example.com", "EXAMPLE.COM", true },
  { "ExAmPlE.cOm", "example.com", true },
  { "example.com", "www.example.com", false },
  { "example.com", "example.org", false },
  { "example.com", "example.co", false },
  { "example.com", "xexample.com", false },
  { "example.com", "example.com.", false },
  { "*.example.com", "www.example.com", true },
  { "*.example.com", "a.b.example.com", true },
  { "*.example.com", "a.b.c.d.e.example.com", true },
  { "*.example.com", "WWW.Example.COM", true },
  { "*.EXAMPLE.COM", "www.example.com", true },
  { "*.example.com", "example.com", false },
  { "*.example.com", "EXAMPLE.COM", false },
  { "*.example.com", "badexample.com", false },
  { "*.example.com", "wwwexample.com", false },
  { "*.example.com", "example.com.evil.net", false },
  { "*.example.com", "www.example.com.evil.net", false },
  { "*.example.com", "www.example.co", false },
  { "*.example.com", "www.example.org", false },
  { "*.example.com", "com", false },
  { "*.example.com", ".example.com", false },
  { "*.example.com", "a..example.com", false },
  { "*.example.com", "*.example.com", false },
  { "*.example.com", "www.example.com.", false },
  { "*.com", "example.com", true },
  { "*.com", "com", false },
  { "*.com", "example.org", false },
  { "*.com", "a.b.com", true },
  /* An invalid pattern matches nothing, an invalid host is matched by nothing. */
  { "*", "example.com", false },
  { "", "", false },
  { "*.", "example.com", false },
  { "*example.com", "www.example.com", false },
  { "*example.com", "example.com", false },
  { "127.0.0.1", "127.0.0.1", false },
  { "*.0.0.1", "127.0.0.1", false },
  { "*.1", "127.0.0.1", false },
  { "*.example.com", "127.0.0.1", false },
  { "0x7f000001", "0x7f000001", false },
  { "example.com", "example.com:443", false },
};

static int
match_row (size_t row)
{
  EXPECT (bx_host_matches (match_table[row].pattern, match_table[row].host)
              == match_table[row].match,
          "bx_host_matches (\"%s\", \"%s\") should be %s", match_table[row].pattern,
          match_table[row].host, match_table[row].match ? "true" : "false");
  return 0;
}

START_TEST (test_host_matches_follows_the_table)
{
  RUN_TABLE (match_table, match_row);
}
END_TEST

START_TEST (test_host_matches_a_253_character_name_below_a_pattern)
{
  char *l63 = repeat ('a', 63), *l53 = repeat ('b', 53);
  char host[300];
  snprintf (host, sizeof host, "%s.%s.%s.%s.example", l63, l63, l63, l53);
  ck_assert_uint_eq (strlen (host), 253);
  ck_assert (bx_host_matches ("*.example", host));
  ck_assert (!bx_host_matches ("*.other", host));
  free (l63);
  free (l53);
}
END_TEST

static const struct
{
  const char *pattern;
  bool valid;
} port_pattern_table[] = {
  { "example.com", true },
  { "*.example.com", true },
  { "example.com:443", true },
  { "example.com:1", true },
  { "example.com:8443", true },
  { "example.com:65535", true },
  { "example.com:*", true },
  { "*.example.com:*", true },
  { "*.example.com:9418", true },
  { "EXAMPLE.COM:80", true },
  { "localhost:5000", true },
  { "example.com:", false },
  { "example.com:0", false },
  { "example.com:00", false },
  { "example.com:0443", false },
  { "example.com:65536", false },
  { "example.com:99999", false },
  { "example.com:100000", false },
  { "example.com:-1", false },
  { "example.com:+443", false },
  { "example.com: 443", false },
  { "example.com:443 ", false },
  { "example.com:4a3", false },
  { "example.com:0x1bb", false },
  { "example.com:**", false },
  { "example.com:*1", false },
  { "example.com:1:2", false },
  { "example.com::443", false },
  { ":443", false },
  { ":*", false },
  { "*:443", false },
  { "*.:443", false },
  { "127.0.0.1:443", false },
  { "0x7f000001:80", false },
  { "[::1]:443", false },
  { "::1", false },
  { "example.com.:443", false },
  { "", false },
};

static int
port_pattern_row (size_t row)
{
  EXPECT (bx_valid_host_port_pattern (port_pattern_table[row].pattern)
              == port_pattern_table[row].valid,
          "bx_valid_host_port_pattern (\"%s\") should be %s", port_pattern_table[row].pattern,
          port_pattern_table[row].valid ? "true" : "false");
  return 0;
}

START_TEST (test_valid_host_port_pattern_follows_the_table)
{
  RUN_TABLE (port_pattern_table, port_pattern_row);
  ck_assert (!bx_valid_host_port_pattern (NULL));
  ck_assert (!bx_host_port_matches (NULL, "example.com", 443));
  ck_assert (!bx_host_port_matches ("example.com", NULL, 443));
}
END_TEST

static const struct
{
  const char *pattern;
  const char *host;
  unsigned port;
  bool match;
} port_match_table[] = {
  /* No port written: 443 only, as before ports existed. */
  { "example.com", "example.com", 443, true },
  { "example.com", "example.com", 80, false },
  { "example.com", "example.com", 8443, false },
  { "*.example.com", "a.example.com", 443, true },
  { "*.example.com", "a.example.com", 444, false },
  /* One port. */
  { "example.com:8443", "example.com", 8443, true },
  { "example.com:8443", "EXAMPLE.com", 8443, true },
  { "example.com:8443", "example.com", 443, false },
  { "example.com:8443", "example.com", 84, false },
  { "example.com:8443", "example.com", 84430, false },
  { "example.com:443", "example.com", 443, true },
  { "example.com:1", "example.com", 1, true },
  { "example.com:65535", "example.com", 65535, true },
  { "*.example.com:9418", "git.example.com", 9418, true },
  { "*.example.com:9418", "example.com", 9418, false },
  /* Every port, never port 0 or past 65535. */
  { "example.com:*", "example.com", 1, true },
  { "example.com:*", "example.com", 443, true },
  { "example.com:*", "example.com", 65535, true },
  { "example.com:*", "example.com", 0, false },
  { "example.com:*", "example.com", 65536, false },
  { "example.com:*", "www.example.com", 443, false },
  { "*.example.com:*", "www.example.com", 22, true },
  /* The host part follows the host rules: no address, wherever the port is. */
  { "example.com:*", "127.0.0.1", 443, false },
  { "example.com:*", "example.com:443", 443, false },
  { "example.com:0443", "example.com", 443, false },
  { "example.com:", "example.com", 443, false },
  { "", "example.com", 443, false },
};

static int
port_match_row (size_t row)
{
  EXPECT (bx_host_port_matches (port_match_table[row].pattern, port_match_table[row].host,
                                port_match_table[row].port)
              == port_match_table[row].match,
          "bx_host_port_matches (\"%s\", \"%s\", %u) should be %s", port_match_table[row].pattern,
          port_match_table[row].host, port_match_table[row].port,
          port_match_table[row].match ? "true" : "false");
  return 0;
}

START_TEST (test_host_port_matches_follows_the_table)
{
  RUN_TABLE (port_match_table, port_match_row);
}
END_TEST

START_TEST (test_a_port_pattern_of_the_longest_host_is_valid_and_one_longer_is_not)
{
  char *l63 = repeat ('a', 63), *l61 = repeat ('b', 61);
  char pattern[400];
  /* "*." + 253 characters + ":65535" */
  snprintf (pattern, sizeof pattern, "*.%s.%s.%s.%s:65535", l63, l63, l63, l61);
  ck_assert_uint_eq (strlen (pattern), BX_HOST_PORT_PATTERN_MAX);
  ck_assert (bx_valid_host_port_pattern (pattern));
  snprintf (pattern, sizeof pattern, "*.%s.%s.%s.%sb:65535", l63, l63, l63, l61);
  ck_assert (!bx_valid_host_port_pattern (pattern));
  free (l63);
  free (l61);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("proto_hosts");
  TCase *tc = tcase_create ("hosts");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_valid_host_follows_the_table);
  tcase_add_test (tc, test_valid_host_refuses_null);
  tcase_add_test (tc, test_valid_host_n_refuses_an_embedded_nul);
  tcase_add_test (tc, test_valid_host_allows_labels_of_63_and_not_64);
  tcase_add_test (tc, test_valid_host_allows_253_characters_and_not_254);
  tcase_add_test (tc, test_valid_host_refuses_a_very_long_string);
  tcase_add_test (tc, test_valid_host_refuses_whatever_inet_aton_reads);
  tcase_add_test (tc, test_valid_host_pattern_follows_the_table);
  tcase_add_test (tc, test_host_matches_follows_the_table);
  tcase_add_test (tc, test_host_matches_a_253_character_name_below_a_pattern);
  tcase_add_test (tc, test_valid_host_port_pattern_follows_the_table);
  tcase_add_test (tc, test_host_port_matches_follows_the_table);
  tcase_add_test (tc, test_a_port_pattern_of_the_longest_host_is_valid_and_one_longer_is_not);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)

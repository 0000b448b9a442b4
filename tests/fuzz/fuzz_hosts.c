/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness for host names, patterns (with ports), public addresses and allow_private
 * ranges.  The input is a host, or a pattern and a host separated by a newline; the checks
 * are the rules of docs/hosts.md restated independently. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/addr.h"
#include "bx/cidr.h"
#include "bx/cleanup.h"
#include "bx/hosts.h"

#define CHECK(c)                                                                                   \
  do                                                                                               \
    {                                                                                              \
      if (!(c))                                                                                    \
        abort ();                                                                                  \
    }                                                                                              \
  while (0)

static void
check_valid_host (const char *h, size_t len)
{
  CHECK (len >= 1 && len <= BX_HOST_MAX);
  CHECK (h[0] != '.' && h[len - 1] != '.' && h[0] != '-');
  for (size_t i = 0; i < len; i++)
    CHECK (isalnum ((unsigned char)h[i]) || h[i] == '-' || h[i] == '.');
  struct in_addr a4;
  struct in6_addr a6;
  CHECK (inet_aton (h, &a4) == 0);
  CHECK (inet_pton (AF_INET6, h, &a6) != 1);
  /* The last label is not all digits. */
  const char *last = strrchr (h, '.');
  last = last ? last + 1 : h;
  CHECK (strspn (last, "0123456789") != strlen (last));

  /* Case does not matter. */
  char upper[BX_HOST_MAX + 1];
  for (size_t i = 0; i <= len; i++)
    upper[i] = (char)toupper ((unsigned char)h[i]);
  CHECK (bx_valid_host (upper));
  CHECK (bx_host_matches (h, upper) && bx_host_matches (upper, h));
  CHECK (bx_valid_host_pattern (h));

  /* "*.h" matches names below h and never h itself. */
  char pattern[BX_HOST_MAX + 3], below[BX_HOST_MAX + 3];
  snprintf (pattern, sizeof pattern, "*.%s", h);
  CHECK (bx_valid_host_pattern (pattern));
  CHECK (!bx_host_matches (pattern, h));
  if (len + 2 <= BX_HOST_MAX)
    {
      snprintf (below, sizeof below, "a.%s", upper);
      CHECK (bx_host_matches (pattern, below));
    }
}

static void
check_addresses (const uint8_t *data, size_t size)
{
  if (size < 4)
    return;
  struct in_addr a4;
  memcpy (&a4.s_addr, data, 4);
  bool pub = bx_is_public_v4 (&a4);
  /* The mapped and NAT64 forms are judged by the IPv4 address. */
  struct in6_addr a6;
  memset (&a6, 0, sizeof a6);
  a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
  memcpy (a6.s6_addr + 12, data, 4);
  CHECK (bx_is_public_v6 (&a6) == pub);
  static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
  memcpy (a6.s6_addr, nat64, 12);
  CHECK (bx_is_public_v6 (&a6) == pub);
  if (size >= 16)
    {
      memcpy (a6.s6_addr, data, 16);
      bool pub6 = bx_is_public_v6 (&a6);
      /* Nothing outside 2000::/3 is public but the embedded IPv4 forms. */
      if ((a6.s6_addr[0] & 0xe0) != 0x20 && memcmp (a6.s6_addr, nat64, 12) != 0
          && !IN6_IS_ADDR_V4MAPPED (&a6))
        CHECK (!pub6);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  check_addresses (data, size);
  if (size > 1024)
    return 0;
  char *s = malloc (size + 1);
  memcpy (s, data, size);
  s[size] = '\0';

  /* An allow_private range: one that parses never holds loopback or link-local, and holds
   * its own first address unless that is one the proxy never reaches. */
  struct bx_cidr range;
  cleanup_error bx_error why = NULL;
  if (bx_cidr_parse (s, &range, &why) == 0)
    {
      CHECK (range.family == AF_INET || range.family == AF_INET6);
      struct sockaddr_in lo4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (0x7f000001) };
      struct sockaddr_in ll4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (0xa9fea9fe) };
      struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
      CHECK (!bx_cidr_contains (&range, (struct sockaddr *)&lo4));
      CHECK (!bx_cidr_contains (&range, (struct sockaddr *)&ll4));
      CHECK (!bx_cidr_contains (&range, (struct sockaddr *)&lo6));
      if (range.family == AF_INET)
        {
          struct sockaddr_in first = { .sin_family = AF_INET };
          memcpy (&first.sin_addr, range.addr, 4);
          CHECK (bx_cidr_contains (&range, (struct sockaddr *)&first));
        }
    }
  else
    CHECK (why != NULL);

  bool valid = bx_valid_host_n (s, size);
  if (memchr (s, '\0', size) != NULL)
    CHECK (!valid);
  else
    CHECK (bx_valid_host (s) == valid);
  if (valid)
    check_valid_host (s, size);

  /* pattern\nhost */
  char *nl = memchr (s, '\n', size);
  if (nl != NULL)
    {
      *nl = '\0';
      const char *pattern = s, *host = nl + 1;
      if (bx_host_matches (pattern, host))
        {
          CHECK (bx_valid_host (host) && bx_valid_host_pattern (pattern));
          size_t hl = strlen (host), pl = strlen (pattern);
          if (pattern[0] == '*')
            CHECK (hl > pl - 1 && strcasecmp (host + hl - (pl - 1), pattern + 1) == 0);
          else
            CHECK (strcasecmp (host, pattern) == 0);
        }
      /* A pattern with a port allows what its host part matches, on its port only. */
      static const unsigned ports[] = { 0, 1, 80, 443, 8443, 65535, 65536 };
      for (size_t i = 0; i < sizeof ports / sizeof *ports; i++)
        if (bx_host_port_matches (pattern, host, ports[i]))
          {
            unsigned port = ports[i];
            CHECK (bx_valid_host_port_pattern (pattern) && port >= 1 && port <= 65535);
            char *colon = strrchr (pattern, ':');
            if (colon == NULL)
              CHECK (port == BX_HOST_DEFAULT_PORT && bx_host_matches (pattern, host));
            else
              {
                *colon = '\0';
                CHECK (bx_host_matches (pattern, host));
                CHECK (strcmp (colon + 1, "*") == 0 || (unsigned)atoi (colon + 1) == port);
                *colon = ':';
              }
          }
      if (bx_valid_host_port_pattern (pattern))
        CHECK (strchr (pattern, ':') != NULL || bx_valid_host_pattern (pattern));
    }
  free (s);
  return 0;
}

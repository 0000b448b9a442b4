/* SPDX-License-Identifier: Apache-2.0 */
/* Host names and patterns: see bx/hosts.h and docs/hosts.md. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>

#include "bx/hosts.h"

static bool
is_alnum (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static char
lower (char c)
{
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Compares two names of LEN bytes without regard to ASCII case (strcasecmp would follow the
 * locale; host names are ASCII whatever the locale says). */
static bool
equal_nocase (const char *a, const char *b, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (lower (a[i]) != lower (b[i]))
      return false;
  return true;
}

static bool
is_hex (char c)
{
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The last label of a name read as a number, as the WHATWG URL standard's "ends in a number"
 * check does: all decimal digits, or "0x" followed by hex digits (none at all included).
 * A URL parser turns such a name into an IPv4 address, so it is never a host. */
static bool
ends_in_a_number (const char *label, size_t len)
{
  size_t i = 0;
  bool hex = len >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X');
  if (hex)
    i = 2;
  for (; i < len; i++)
    if (hex ? !is_hex (label[i]) : !(label[i] >= '0' && label[i] <= '9'))
      return false;
  return true;
}

/* True when the name (NUL-terminated) is something the resolver would take as an address.
 * glibc's getaddrinfo reads inet_aton's forms (0x7f000001, 127.1, 0177.0.0.1) as addresses,
 * so a grant for such a "name" would be a grant for an address. */
static bool
is_ip_literal (const char *name)
{
  struct in_addr a4;
  struct in6_addr a6;
  return inet_aton (name, &a4) != 0 || inet_pton (AF_INET, name, &a4) == 1
         || inet_pton (AF_INET6, name, &a6) == 1;
}

bool
bx_valid_host_n (const char *name, size_t len)
{
  if (name == NULL || len == 0 || len > BX_HOST_MAX)
    return false;
  if (memchr (name, '\0', len) != NULL)
    return false;

  size_t label_start = 0;
  for (size_t i = 0; i <= len; i++)
    {
      if (i == len || name[i] == '.')
        {
          size_t label_len = i - label_start;
          /* Empty labels catch a leading dot, "a..b" and the trailing dot. */
          if (label_len == 0 || label_len > 63)
            return false;
          if (name[label_start] == '-' || name[i - 1] == '-')
            return false;
          if (i == len && ends_in_a_number (name + label_start, label_len))
            return false;
          label_start = i + 1;
          continue;
        }
      char c = name[i];
      if (!is_alnum (c) && c != '-')
        return false;
    }

  char copy[BX_HOST_MAX + 1];
  memcpy (copy, name, len);
  copy[len] = '\0';
  return !is_ip_literal (copy);
}

bool
bx_valid_host (const char *name)
{
  if (name == NULL)
    return false;
  /* Longer than BX_HOST_MAX is invalid whatever follows; no need to measure it all. */
  return bx_valid_host_n (name, strnlen (name, BX_HOST_MAX + 1));
}

bool
bx_valid_host_pattern (const char *pattern)
{
  if (pattern == NULL)
    return false;
  if (pattern[0] == '*' && pattern[1] == '.')
    return bx_valid_host (pattern + 2);
  return bx_valid_host (pattern);
}

bool
bx_host_matches (const char *pattern, const char *host)
{
  if (!bx_valid_host_pattern (pattern) || !bx_valid_host (host))
    return false;
  size_t host_len = strlen (host);
  if (pattern[0] == '*')
    {
      /* "*.example.com" matches "a.example.com" and "a.b.example.com": the host must end
       * with ".example.com" and have at least one label before it. */
      const char *suffix = pattern + 1; /* ".example.com" */
      size_t suffix_len = strlen (suffix);
      if (host_len <= suffix_len)
        return false;
      return equal_nocase (host + host_len - suffix_len, suffix, suffix_len);
    }
  return strlen (pattern) == host_len && equal_nocase (pattern, host, host_len);
}

unsigned
bx_port_parse (const char *text, size_t len)
{
  /* "0443" is 443 to curl and a URL parser; refused so that one port has one spelling. */
  if (len == 0 || len > 5 || text[0] == '0')
    return 0;
  unsigned port = 0;
  for (size_t i = 0; i < len; i++)
    {
      if (text[i] < '0' || text[i] > '9')
        return 0;
      port = port * 10 + (unsigned)(text[i] - '0');
    }
  return port <= 65535 ? port : 0;
}

/* Splits "pattern[:port]" at its last ':' (a host holds none).  PORT is 0 for "*", the
 * default port when none is written; false when the port part is not a port or the
 * pattern part is too long. */
static bool
split_port (const char *text, char pattern[BX_HOST_MAX + 3], unsigned *port)
{
  const char *colon = strrchr (text, ':');
  size_t plen = colon ? (size_t)(colon - text) : strlen (text);
  if (plen > BX_HOST_MAX + 2)
    return false;
  memcpy (pattern, text, plen);
  pattern[plen] = '\0';
  if (colon == NULL)
    *port = BX_HOST_DEFAULT_PORT;
  else if (strcmp (colon + 1, "*") == 0)
    *port = 0;
  else if ((*port = bx_port_parse (colon + 1, strlen (colon + 1))) == 0)
    return false;
  return true;
}

bool
bx_valid_host_port_pattern (const char *text)
{
  char pattern[BX_HOST_MAX + 3];
  unsigned port;
  if (text == NULL || strnlen (text, BX_HOST_PORT_PATTERN_MAX + 1) > BX_HOST_PORT_PATTERN_MAX)
    return false;
  return split_port (text, pattern, &port) && bx_valid_host_pattern (pattern);
}

bool
bx_host_port_matches (const char *text, const char *host, unsigned port)
{
  char pattern[BX_HOST_MAX + 3];
  unsigned allowed = 0;
  if (!bx_valid_host_port_pattern (text) || port == 0 || port > 65535
      || !split_port (text, pattern, &allowed))
    return false;
  return (allowed == 0 || allowed == port) && bx_host_matches (pattern, host);
}

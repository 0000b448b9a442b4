/* SPDX-License-Identifier: Apache-2.0 */
/* Sizes and durations: see values.h. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "values.h"

int
bx_value_digits (const char *s, size_t n, uint64_t *out)
{
  if (n == 0)
    return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return -1;
      unsigned d = (unsigned)(s[i] - '0');
      if (v > (UINT64_MAX - d) / 10)
        return -2;
      v = v * 10 + d;
    }
  *out = v;
  return 0;
}

/* Digits followed by one of SUFFIXES (each with its multiplier); no suffix means a
 * multiplier of 1.  0 and *out set, -1 malformed, -2 too large. */
struct suffix
{
  const char *text;
  uint64_t times;
};

static int
parse_with_suffix (const char *s, const struct suffix *suffixes, uint64_t *out)
{
  size_t digits = strspn (s, "0123456789");
  const char *rest = s + digits;
  uint64_t times = 0;
  if (*rest == '\0')
    times = 1;
  for (size_t i = 0; times == 0 && suffixes[i].text != NULL; i++)
    if (strcmp (rest, suffixes[i].text) == 0)
      times = suffixes[i].times;
  if (times == 0 || digits == 0)
    return -1;
  uint64_t v;
  int r = bx_value_digits (s, digits, &v);
  if (r < 0)
    return r;
  if (v != 0 && times > UINT64_MAX / v)
    return -2;
  *out = v * times;
  return 0;
}

static const struct suffix size_suffixes[] = {
  { "k", UINT64_C (1) << 10 },
  { "K", UINT64_C (1) << 10 },
  { "m", UINT64_C (1) << 20 },
  { "M", UINT64_C (1) << 20 },
  { "g", UINT64_C (1) << 30 },
  { "G", UINT64_C (1) << 30 },
  { NULL, 0 },
};

static const struct suffix duration_suffixes[] = {
  { "ms", 1 }, { "s", 1000 }, { "m", 60 * 1000 }, { "h", 60 * 60 * 1000 }, { NULL, 0 },
};

int
bx_value_size (const char *s, uint64_t *out)
{
  return parse_with_suffix (s, size_suffixes, out);
}

int
bx_value_duration_ms (const char *s, uint64_t *out)
{
  return parse_with_suffix (s, duration_suffixes, out);
}

bool
bx_value_bare_ms_allowed (const char *key)
{
  size_t n = strlen (key);
  return n > 3 && strcmp (key + n - 3, "_ms") == 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The per-call limits in brokerd's config: see call_limits.h. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"

#include "host_services.h"
#include "call_limits.h"
#include "values.h"

enum unit
{
  UNIT_DURATION,
  UNIT_SIZE,
  UNIT_COUNT,
  UNIT_CPUS,
};

struct limit_def
{
  const char *key;
  enum unit unit;
  uint64_t min, max;
  const char *expected;
};

#define MIB (UINT64_C (1) << 20)

/* Ranges: a day of time; podman's 6m minimum of memory (no sandbox starts in less); the
 * kernel's pid_max; 0.001 to 1024 CPUs; output no larger than a response carries. */
static const struct limit_def defs[BX_LIMIT_COUNT] = {
  [BX_LIMIT_TIME] = { "time", UNIT_DURATION, 1, UINT64_C (86400000),
                      "a duration such as 30s, 500ms or 2m, from 1ms to a day (1440m)" },
  [BX_LIMIT_MEMORY]
  = { "memory", UNIT_SIZE, 6 * MIB, UINT64_C (1) << 40, "a size such as 512m, from 6m to 1024g" },
  [BX_LIMIT_PIDS] = { "pids", UNIT_COUNT, 1, 4194304, "an integer from 1 to 4194304" },
  [BX_LIMIT_CPU]
  = { "cpus", UNIT_CPUS, 1, 1024000, "a number of CPUs such as 1 or 0.5, from 0.001 to 1024" },
  [BX_LIMIT_OUTPUT] = { "output", UNIT_SIZE, 1, BX_HOST_OUTPUT_CAP,
                        "a size such as 256k, from 1 to 4128768 bytes (what a response carries)" },
  [BX_LIMIT_FILE_SIZE]
  = { "file_size", UNIT_SIZE, 1, UINT64_C (1) << 40, "a size such as 64m, from 1 byte to 1024g" },
};

const char *
bx_limit_key (int which)
{
  return which >= 0 && which < BX_LIMIT_COUNT ? defs[which].key : NULL;
}

const char *
bx_limit_expected (int which)
{
  return which >= 0 && which < BX_LIMIT_COUNT ? defs[which].expected : NULL;
}

/* "1", "0.5", "1.25": up to three decimals, in thousandths. */
static int
parse_cpus (const char *text, uint64_t *out)
{
  size_t whole = strspn (text, "0123456789");
  const char *p = text + whole;
  size_t frac = 0;
  if (*p == '.')
    {
      frac = strspn (p + 1, "0123456789");
      if (frac == 0 || frac > 3 || p[1 + frac] != '\0')
        return -1;
    }
  else if (*p != '\0')
    return -1;
  if (whole == 0 || whole > 7)
    return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < whole; i++)
    v = v * 10 + (uint64_t)(text[i] - '0');
  v *= 1000;
  uint64_t scale = 100;
  for (size_t i = 0; i < frac; i++, scale /= 10)
    v += (uint64_t)(p[1 + i] - '0') * scale;
  *out = v;
  return 0;
}

int
bx_limit_parse (int which, const char *text, uint64_t *out)
{
  if (which < 0 || which >= BX_LIMIT_COUNT || text == NULL)
    return -1;
  const struct limit_def *d = &defs[which];
  uint64_t v = 0;
  int r;
  switch (d->unit)
    {
    case UNIT_DURATION:
      if (!bx_value_bare_ms_allowed (d->key) && bx_value_digits (text, strlen (text), &v) == 0)
        return BX_LIMIT_NO_UNIT;
      r = bx_value_duration_ms (text, &v);
      break;
    case UNIT_SIZE:
      r = bx_value_size (text, &v);
      break;
    case UNIT_COUNT:
      r = strspn (text, "0123456789") == strlen (text) && strlen (text) <= 8
              ? bx_value_size (text, &v)
              : -1;
      break;
    case UNIT_CPUS:
    default:
      r = parse_cpus (text, &v);
      break;
    }
  if (r < 0 || v < d->min || v > d->max)
    return -1;
  *out = v;
  return 0;
}

uint64_t
bx_limit_for_call (int which, const uint64_t *grant, const uint64_t *defaults)
{
  if (which < 0 || which >= BX_LIMIT_COUNT)
    return 0;
  uint64_t v = grant != NULL && grant[which] != 0 ? grant[which] : 0;
  if (v == 0 && defaults != NULL)
    v = defaults[which];
  if (which == BX_LIMIT_OUTPUT && (v == 0 || v > BX_HOST_OUTPUT_CAP))
    v = BX_HOST_OUTPUT_CAP;
  return v;
}

char *
bx_limits_describe (const uint64_t *limits)
{
  char *text = NULL;
  for (int i = 0; i < BX_LIMIT_COUNT; i++)
    {
      if (limits[i] == 0)
        continue;
      char value[48];
      switch (defs[i].unit)
        {
        case UNIT_DURATION:
          snprintf (value, sizeof value, "%" PRIu64 "ms", limits[i]);
          break;
        case UNIT_CPUS:
          snprintf (value, sizeof value, "%" PRIu64 ".%03" PRIu64, limits[i] / 1000,
                    limits[i] % 1000);
          break;
        default:
          snprintf (value, sizeof value, "%" PRIu64, limits[i]);
          break;
        }
      char *more
          = bx_xasprintf ("%s%s%s %s", text ? text : "", text ? ", " : "", defs[i].key, value);
      free (text);
      text = more;
    }
  return text;
}

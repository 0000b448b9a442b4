/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness for the option helpers of the host services: any bytes as an option's
 * value (and as an unknown key) must give either a value that obeys the helper's rule or a
 * one-line message naming the option, never a crash. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_services.h"
#include "options.h"

static void
check_message (const struct bx_error_sink *sink, const char *needle)
{
  if (sink->msg == NULL || strstr (sink->msg, needle) == NULL)
    abort ();
  for (const char *p = sink->msg; *p != '\0'; p++)
    if ((unsigned char)*p < 0x20)
      abort ();
}

static int
all_digits (const char *s, size_t n)
{
  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!isdigit ((unsigned char)s[i]))
      return 0;
  return 1;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *value = strndup ((const char *)data, size);
  if (value == NULL)
    return 0;
  size_t len = strlen (value);

  struct bx_host_services services;
  bx_host_services_init (&services, "fuzz", "/", NULL, NULL);
  const struct bx_host *h = &services.host;
  bx_options *o = bx_options_new ();
  bx_options_add_string (o, "opt", value);
  bx_options_add_string (o, value, "x");
  struct bx_error_sink sink = { 0 };

  uint64_t u;
  if (h->option_size (o, "opt", 1, &u, &sink) == 0)
    {
      /* digits and at most one suffix letter, never zero */
      size_t digits = strspn (value, "0123456789");
      if (u == 0 || digits == 0 || len - digits > 1)
        abort ();
    }
  else
    check_message (&sink, "option \"opt\"");

  if (h->option_duration_ms (o, "opt", 1, &u, &sink) == 0)
    {
      size_t digits = strspn (value, "0123456789");
      if (u == 0 || digits == 0 || len - digits > 2)
        abort ();
    }
  else
    check_message (&sink, "option \"opt\"");

  int64_t i;
  if (h->option_int (o, "opt", INT64_MIN, INT64_MAX, 0, &i, &sink) == 0)
    {
      const char *digits = value[0] == '-' ? value + 1 : value;
      errno = 0;
      long long ref = strtoll (value, NULL, 10);
      if (!all_digits (digits, strlen (digits)) || errno != 0 || ref != i)
        abort ();
    }
  else
    check_message (&sink, "option \"opt\"");

  int b;
  if (h->option_bool (o, "opt", 0, &b, &sink) == 0)
    {
      if (strcmp (value, "true") != 0 && strcmp (value, "false") != 0 && strcmp (value, "yes") != 0
          && strcmp (value, "no") != 0)
        abort ();
    }
  else
    check_message (&sink, "option \"opt\"");

  /* The value as a key: unknown unless it is "opt" itself. */
  static const char *const known[] = { "opt", NULL };
  if (h->option_check_known (o, known, &sink) == 0)
    {
      if (strcmp (value, "opt") != 0)
        abort ();
    }
  else
    check_message (&sink, "unknown option");

  bx_error_sink_clear (&sink);
  bx_options_free (o);
  bx_host_services_clear (&services);
  free (value);
  return 0;
}

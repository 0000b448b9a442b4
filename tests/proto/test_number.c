/* SPDX-License-Identifier: Apache-2.0 */
/* Whole numbers from the command line (bx/number.h): what strtoull alone would take and the
 * options must not. */
#include <check.h>
#include <stdint.h>

#include "bx/number.h"
#include "test_main.h"

static const struct
{
  const char *in;
  int rc;
  uint64_t value;
} numbers[] = {
  { "0", 0, 0 },
  { "1500", 0, 1500 },
  { "007", 0, 7 },
  { "18446744073709551615", 0, UINT64_MAX },
  { "18446744073709551616", -1, 0 },
  { "", -1, 0 },
  { "-1", -1, 0 },
  { "+1", -1, 0 },
  { " 1", -1, 0 },
  { "1 ", -1, 0 },
  { "1s", -1, 0 },
  { "0x10", -1, 0 },
  { "1.5", -1, 0 },
};

START_TEST (test_parse_u64_follows_the_table)
{
  for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
    {
      uint64_t v = 42;
      int rc = bx_parse_u64 (numbers[i].in, &v);
      ck_assert_msg (rc == numbers[i].rc, "\"%s\": rc %d", numbers[i].in, rc);
      ck_assert_msg (v == (rc == 0 ? numbers[i].value : 42), "\"%s\": %llu", numbers[i].in,
                     (unsigned long long)v);
    }
}
END_TEST

static Suite *
number_suite (void)
{
  Suite *s = suite_create ("base_number");
  TCase *tc = tcase_create ("number");
  tcase_add_test (tc, test_parse_u64_follows_the_table);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (number_suite)

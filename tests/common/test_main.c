/* SPDX-License-Identifier: Apache-2.0 */
/* See test_main.h. */
#include <stdlib.h>

#include "test_main.h"

int
bx_test_run_suite (Suite *suite)
{
  SRunner *sr = srunner_create (suite);
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

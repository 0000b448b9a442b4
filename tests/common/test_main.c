/* SPDX-License-Identifier: Apache-2.0 */
/* See test_main.h. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_main.h"

/* Check runs each test in a child of its own: a skip reaches the runner as one byte on this
 * pipe, which the children inherit. */
static int skip_pipe[2] = { -1, -1 };

void
bx_test_prepare (void)
{
  setenv ("CK_DEFAULT_TIMEOUT", "60", 0);
}

int
bx_test_skip_all (const char *why_not)
{
  printf ("skipped: %s\n", why_not);
  fflush (stdout);
  return BX_TEST_SKIPPED;
}

void
bx_test_skip_note (const char *test, const char *fmt, ...)
{
  /* __func__ of a START_TEST body is the test's name with "_fn" after it. */
  size_t len = strlen (test);
  if (len > 3 && strcmp (test + len - 3, "_fn") == 0)
    len -= 3;
  printf ("skipped %.*s: ", (int)len, test);
  va_list ap;
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  if (skip_pipe[1] < 0 || write (skip_pipe[1], "s", 1) != 1)
    {
      /* Without the pipe the skip could pass for a pass: fail instead. */
      ck_abort_msg ("cannot record the skip of %.*s", (int)len, test);
    }
}

TCase *
bx_test_case_may_skip (Suite *suite, const char *name)
{
  TCase *tc = tcase_create (name);
  tcase_set_tags (tc, "may_skip");
  suite_add_tcase (suite, tc);
  return tc;
}

/* How many tests skipped: the bytes waiting on the pipe. */
static int
count_skips (void)
{
  int n = 0;
  char buf[256];
  ssize_t got;
  while ((got = read (skip_pipe[0], buf, sizeof buf)) > 0)
    n += (int)got;
  return n;
}

int
bx_test_run_suite (Suite *suite)
{
  if (pipe2 (skip_pipe, O_CLOEXEC) < 0 || fcntl (skip_pipe[0], F_SETFL, O_NONBLOCK) < 0)
    {
      perror ("test runner: pipe");
      return EXIT_FAILURE;
    }
  SRunner *sr = srunner_create (suite);
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  int skipped = count_skips ();
  if (failed != 0)
    return EXIT_FAILURE;
  if (skipped != 0)
    {
      printf ("%d test(s) skipped (each says why above): the program reports skipped\n", skipped);
      return BX_TEST_SKIPPED;
    }
  return EXIT_SUCCESS;
}

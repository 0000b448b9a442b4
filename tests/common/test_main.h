/* SPDX-License-Identifier: Apache-2.0 */
/* The one main of every Check suite (libvirt's VIR_TEST_MAIN): a test file defines
 *
 *   static Suite *make_suite (void) { ... }
 *   BX_TEST_MAIN (make_suite)
 *
 * and gets a main that runs it in Check's fork mode (a crash fails one test, not the run;
 * CK_FORK=no under valgrind or gdb) and exits non-zero when any test failed.
 *
 * Skips are reported as skips, never as passes: the program exits 77 (CTest's
 * SKIP_RETURN_CODE, which bx_check_test sets) and prints why.  Check has no skipped result
 * of its own, so a program skips as a whole:
 *   - BX_TEST_MAIN_UNLESS (WHY_NOT, make_suite): when WHY_NOT is not NULL, every test of the
 *     program needs what it names; nothing runs.
 *   - BX_TEST_SKIP ("why") in a test ends that test; once the suite has run, the program
 *     exits 77 unless a test failed.  A test that may skip goes in a TCase of its own,
 *     created with bx_test_case_may_skip and named in bx_check_test's MAY_SKIP list: CTest
 *     then runs it as an entry of its own, and the program's main entry runs the rest. */
#ifndef BX_TEST_MAIN_H
#define BX_TEST_MAIN_H

#include <check.h>

/* The exit status CTest reads as "skipped". */
#define BX_TEST_SKIPPED 77

/* Before the suite is made: a test with no timeout of its own gets 60 s rather than Check's
 * 4 s, a bound a loaded machine passes without any hang (CK_DEFAULT_TIMEOUT still wins). */
void bx_test_prepare (void);
int bx_test_run_suite (Suite *suite);
/* Prints "skipped: WHY_NOT" and returns BX_TEST_SKIPPED. */
int bx_test_skip_all (const char *why_not);
/* Records that the test TEST skipped, and prints why.  Use BX_TEST_SKIP. */
void bx_test_skip_note (const char *test, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* A new TCase NAME in SUITE for tests that may skip: the main CTest entry leaves it out. */
TCase *bx_test_case_may_skip (Suite *suite, const char *name);

/* Ends the running test as skipped.  Only in the test's own body: it returns from the
 * function it is written in. */
#define BX_TEST_SKIP(...)                                                                          \
  do                                                                                               \
    {                                                                                              \
      bx_test_skip_note (__func__, __VA_ARGS__);                                                   \
      return;                                                                                      \
    }                                                                                              \
  while (0)

#define BX_TEST_MAIN(make_suite)                                                                   \
  int main (void)                                                                                  \
  {                                                                                                \
    bx_test_prepare ();                                                                            \
    return bx_test_run_suite (make_suite ());                                                      \
  }

#define BX_TEST_MAIN_UNLESS(why_not, make_suite)                                                   \
  int main (void)                                                                                  \
  {                                                                                                \
    const char *bx_why_not_ = (why_not);                                                           \
    if (bx_why_not_ != NULL)                                                                       \
      return bx_test_skip_all (bx_why_not_);                                                       \
    bx_test_prepare ();                                                                            \
    return bx_test_run_suite (make_suite ());                                                      \
  }

#endif

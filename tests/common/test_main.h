/* SPDX-License-Identifier: Apache-2.0 */
/* The one main of every Check suite (libvirt's VIR_TEST_MAIN): a test file defines
 *
 *   static Suite *make_suite (void) { ... }
 *   BX_TEST_MAIN (make_suite)
 *
 * and gets a main that runs it in Check's fork mode (a crash fails one test, not the run;
 * CK_FORK=no under valgrind or gdb) and exits non-zero when any test failed. */
#ifndef BX_TEST_MAIN_H
#define BX_TEST_MAIN_H

#include <check.h>

int bx_test_run_suite (Suite *suite);

#define BX_TEST_MAIN(make_suite)                                                                   \
  int main (void)                                                                                  \
  {                                                                                                \
    return bx_test_run_suite (make_suite ());                                                      \
  }

#endif

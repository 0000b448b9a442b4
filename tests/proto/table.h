/* SPDX-License-Identifier: Apache-2.0 */
/* Table tests without a fork per row: each row is checked by a function that prints what is
 * wrong with it and returns 1, and one Check test runs every row and fails if any did.  A
 * fork per row costs more than the row itself under ASan, and every failing row is still
 * named, not only the first. */
#ifndef BX_TEST_TABLE_H
#define BX_TEST_TABLE_H

#include <check.h>
#include <stdio.h>

#define N(a) (sizeof (a) / sizeof (a)[0])

/* Inside a row function taking `size_t row`: on a false COND, print and give up the row. */
#define EXPECT(cond, ...)                                                                          \
  do                                                                                               \
    {                                                                                              \
      if (!(cond))                                                                                 \
        {                                                                                          \
          fprintf (stderr, "%s:%d: row %zu: ", __FILE__, __LINE__, row);                           \
          fprintf (stderr, __VA_ARGS__);                                                           \
          fputc ('\n', stderr);                                                                    \
          return 1;                                                                                \
        }                                                                                          \
    }                                                                                              \
  while (0)

/* Runs ROW_FN on every row of TABLE and fails the test with the number of failed rows. */
#define RUN_TABLE(table, row_fn)                                                                   \
  do                                                                                               \
    {                                                                                              \
      int failed_rows_ = 0;                                                                        \
      for (size_t r_ = 0; r_ < N (table); r_++)                                                    \
        failed_rows_ += row_fn (r_);                                                               \
      ck_assert_msg (failed_rows_ == 0, "%d of %zu rows of " #table " failed (listed above)",      \
                     failed_rows_, N (table));                                                     \
    }                                                                                              \
  while (0)

#endif

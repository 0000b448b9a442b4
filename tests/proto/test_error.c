/* SPDX-License-Identifier: Apache-2.0 */
/* The error type (bx/error.h) and the cleanup helpers (bx/cleanup.h). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/error.h"
#include "test_main.h"

START_TEST (test_error_set_appends_strerror)
{
  bx_error err = NULL;
  ck_assert_int_eq (bx_error_set (&err, ENOENT, "cannot open %s", "/x"), -1);
  ck_assert_str_eq (bx_error_msg (err), "cannot open /x: No such file or directory");
  ck_assert_int_eq (bx_error_code (err), ENOENT);
  bx_error_free (&err);
  ck_assert_ptr_null (err);
}
END_TEST

START_TEST (test_error_set_with_code_zero_has_no_suffix)
{
  bx_error err = NULL;
  bx_error_set (&err, 0, "plain %d", 7);
  ck_assert_str_eq (bx_error_msg (err), "plain 7");
  ck_assert_int_eq (bx_error_code (err), 0);
  bx_error_free (&err);
}
END_TEST

START_TEST (test_error_setc_keeps_the_code_without_strerror)
{
  bx_error err = NULL;
  ck_assert_int_eq (bx_error_setc (&err, ETIMEDOUT, "no answer in %d s", 5), -1);
  ck_assert_str_eq (bx_error_msg (err), "no answer in 5 s");
  ck_assert_int_eq (bx_error_code (err), ETIMEDOUT);
  bx_error_free (&err);
}
END_TEST

START_TEST (test_error_wrap_reads_from_the_outside_in)
{
  bx_error err = NULL;
  bx_error_setc (&err, ENOENT, "undefined symbol bx_runtime_entry");
  ck_assert_int_eq (bx_error_wrap (&err, "%s", "/usr/lib/podman.so"), -1);
  bx_error_wrap (&err, "cannot load runtime \"%s\"", "podman");
  ck_assert_str_eq (bx_error_msg (err), "cannot load runtime \"podman\": /usr/lib/podman.so: "
                                        "undefined symbol bx_runtime_entry");
  ck_assert_int_eq (bx_error_code (err), ENOENT);
  bx_error_free (&err);
}
END_TEST

START_TEST (test_error_wrap_of_no_error_makes_one)
{
  bx_error err = NULL;
  bx_error_wrap (&err, "context only");
  ck_assert_str_eq (bx_error_msg (err), "context only");
  ck_assert_int_eq (bx_error_code (err), 0);
  bx_error_free (&err);
  ck_assert_int_eq (bx_error_wrap (NULL, "ignored"), -1);
}
END_TEST

START_TEST (test_error_set_replaces_an_error_already_set)
{
  /* Under ASan a leak of the first error fails this test. */
  bx_error err = NULL;
  bx_error_set (&err, EIO, "first");
  bx_error_setc (&err, EPIPE, "second");
  ck_assert_str_eq (bx_error_msg (err), "second");
  ck_assert_int_eq (bx_error_code (err), EPIPE);
  bx_error_free (&err);
}
END_TEST

START_TEST (test_error_accessors_are_safe_on_no_error)
{
  bx_error err = NULL;
  ck_assert_str_eq (bx_error_msg (err), "");
  ck_assert_int_eq (bx_error_code (err), 0);
  bx_error_free (&err);
  bx_error_free (NULL);
  ck_assert_int_eq (bx_error_set (NULL, EIO, "nobody listens"), -1);
  ck_assert_int_eq (bx_error_setc (NULL, EIO, "nobody listens"), -1);
}
END_TEST

static int
fails_and_cleans_up (bx_error *err, int *fd_seen)
{
  cleanup_free char *buf = bx_xstrdup ("scratch");
  cleanup_close int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  *fd_seen = fd;
  return bx_error_setc (err, EINVAL, "gave up with %s", buf);
}

START_TEST (test_cleanup_attributes_free_and_close_on_return)
{
  cleanup_error bx_error err = NULL;
  int fd = -1;
  ck_assert_int_eq (fails_and_cleans_up (&err, &fd), -1);
  ck_assert_str_eq (bx_error_msg (err), "gave up with scratch");
  ck_assert_int_ge (fd, 0);
  /* The descriptor was closed by the cleanup. */
  ck_assert_int_eq (fcntl (fd, F_GETFD), -1);
  ck_assert_int_eq (errno, EBADF);
}
END_TEST

START_TEST (test_steal_hands_over_ownership)
{
  cleanup_free char *s = bx_xstrdup ("mine");
  char *taken = steal_pointer (&s);
  ck_assert_ptr_null (s);
  ck_assert_str_eq (taken, "mine");
  free (taken);
  int fd = 5;
  ck_assert_int_eq (steal_fd (&fd), 5);
  ck_assert_int_eq (fd, -1);
}
END_TEST

START_TEST (test_allocation_helpers_format_and_copy)
{
  cleanup_free char *a = bx_xasprintf ("%s-%d", "x", 42);
  ck_assert_str_eq (a, "x-42");
  cleanup_free char *b = bx_xstrndup ("abcdef", 3);
  ck_assert_str_eq (b, "abc");
  cleanup_free char *z = bx_xzalloc (16);
  for (int i = 0; i < 16; i++)
    ck_assert_int_eq (z[i], 0);
  cleanup_free char *m = bx_xmalloc (0);
  ck_assert_ptr_nonnull (m);
  char *r = bx_xrealloc (NULL, 10);
  r = bx_xrealloc (r, 100);
  free (r);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("proto_error");
  TCase *tc = tcase_create ("error");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_error_set_appends_strerror);
  tcase_add_test (tc, test_error_set_with_code_zero_has_no_suffix);
  tcase_add_test (tc, test_error_setc_keeps_the_code_without_strerror);
  tcase_add_test (tc, test_error_wrap_reads_from_the_outside_in);
  tcase_add_test (tc, test_error_wrap_of_no_error_makes_one);
  tcase_add_test (tc, test_error_set_replaces_an_error_already_set);
  tcase_add_test (tc, test_error_accessors_are_safe_on_no_error);
  tcase_add_test (tc, test_cleanup_attributes_free_and_close_on_return);
  tcase_add_test (tc, test_steal_hands_over_ownership);
  tcase_add_test (tc, test_allocation_helpers_format_and_copy);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)

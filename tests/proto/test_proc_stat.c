/* SPDX-License-Identifier: Apache-2.0 */
/* A task's /proc stat fields (bx/proc_stat.h), read past a command name that holds what
 * would mislead a reader counting spaces or looking for the first ')'. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bx/proc_stat.h"
#include "test_main.h"

START_TEST (test_a_running_thread_with_a_tricky_name)
{
  char old[16] = "";
  ck_assert_int_eq (prctl (PR_GET_NAME, old), 0);
  ck_assert_int_eq (prctl (PR_SET_NAME, "a) S 1 (b) Z"), 0);
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/stat", (int)gettid ());
  struct bx_proc_stat st = { 0 };
  bool ok = bx_proc_stat_read (path, &st);
  prctl (PR_SET_NAME, old);
  ck_assert (ok);
  /* This thread reads its own file: it runs. */
  ck_assert_int_eq (st.state, 'R');
  ck_assert (st.start_time > 0);
  struct bx_proc_stat whole = { 0 };
  ck_assert (bx_proc_stat_read ("/proc/self/stat", &whole));
  ck_assert (whole.start_time > 0 && whole.start_time <= st.start_time);
}
END_TEST

static void *
sleeper (void *arg)
{
  (void)arg;
  pause ();
  return NULL;
}

START_TEST (test_a_sleeping_thread_and_a_missing_task)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, sleeper, NULL), 0);
  /* Its id is not known here: the task of this process that is not this thread. */
  char path[300];
  struct bx_proc_stat st = { 0 };
  bool asleep = false;
  for (int round = 0; round < 500 && !asleep; round++)
    {
      DIR *d = opendir ("/proc/self/task");
      ck_assert_ptr_nonnull (d);
      for (struct dirent *e; !asleep && (e = readdir (d)) != NULL;)
        {
          if (e->d_name[0] == '.' || atoi (e->d_name) == gettid ())
            continue;
          snprintf (path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
          asleep = bx_proc_stat_read (path, &st) && st.state == 'S';
        }
      closedir (d);
      if (!asleep)
        usleep (10 * 1000);
    }
  ck_assert_msg (asleep, "no task of this process asleep");
  pthread_cancel (t);
  pthread_join (t, NULL);
  ck_assert (!bx_proc_stat_read ("/proc/self/task/0/stat", &st));
  ck_assert (!bx_proc_stat_read ("/nonexistent/stat", &st));
}
END_TEST

static Suite *
proc_stat_suite (void)
{
  Suite *s = suite_create ("base_proc_stat");
  TCase *tc = tcase_create ("proc_stat");
  tcase_add_test (tc, test_a_running_thread_with_a_tricky_name);
  tcase_add_test (tc, test_a_sleeping_thread_and_a_missing_task);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (proc_stat_suite)

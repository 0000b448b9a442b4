/* SPDX-License-Identifier: Apache-2.0 */
/* Fair admission (fair.h): at most MAX runs, at most PER_UID for one uid; a run that ends
 * goes to the waiting call whose uid runs the fewest, the oldest among equals; a cancelled
 * waiter leaves taking nothing.  And the config's defaults for max_running. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "config.h"
#include "fair.h"
#include "test_main.h"

struct waiter
{
  struct bx_fair *fair;
  int64_t uid;
  int cancel_fd;
  bool admitted;
  int order; /* when it was admitted, 1 for the first */
};

static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static int order_next;

static void *
waiter_main (void *arg)
{
  struct waiter *w = arg;
  w->admitted = bx_fair_enter (w->fair, w->uid, w->cancel_fd);
  pthread_mutex_lock (&order_lock);
  w->order = ++order_next;
  pthread_mutex_unlock (&order_lock);
  return NULL;
}

/* Until FAIR has WAITING calls waiting. */
static void
until_waiting (struct bx_fair *fair, unsigned waiting)
{
  for (int i = 0; i < 5000; i++)
    {
      unsigned r, w;
      bx_fair_counts (fair, &r, &w);
      if (w == waiting)
        return;
      usleep (1000);
    }
  ck_abort_msg ("never %u waiting", waiting);
}

static void
start (pthread_t *t, struct waiter *w, struct bx_fair *fair, int64_t uid, unsigned now_waiting)
{
  *w = (struct waiter){ .fair = fair, .uid = uid, .cancel_fd = -1 };
  pthread_create (t, NULL, waiter_main, w);
  until_waiting (fair, now_waiting);
}

START_TEST (test_a_run_goes_to_the_uid_running_the_fewest)
{
  order_next = 0;
  struct bx_fair *fair = bx_fair_new (2, 2);
  /* uid 1 takes both runs; then uid 1 and uid 2 wait, uid 1 first. */
  ck_assert (bx_fair_enter (fair, 1, -1));
  ck_assert (bx_fair_enter (fair, 1, -1));
  pthread_t t[2];
  struct waiter w[2];
  start (&t[0], &w[0], fair, 1, 1);
  start (&t[1], &w[1], fair, 2, 2);
  /* One run ends: uid 2 runs none, uid 1 one, so uid 2's call goes, though it came later. */
  bx_fair_leave (fair, 1);
  pthread_join (t[1], NULL);
  ck_assert (w[1].admitted);
  ck_assert_int_eq (w[1].order, 1);
  bx_fair_leave (fair, 1);
  pthread_join (t[0], NULL);
  ck_assert (w[0].admitted);
  bx_fair_leave (fair, 1);
  bx_fair_leave (fair, 2);
  unsigned r, n;
  bx_fair_counts (fair, &r, &n);
  ck_assert_uint_eq (r, 0);
  ck_assert_uint_eq (n, 0);
  bx_fair_free (fair);
}
END_TEST

START_TEST (test_one_uid_waits_past_its_share_while_others_run)
{
  struct bx_fair *fair = bx_fair_new (4, 2);
  ck_assert (bx_fair_enter (fair, 1, -1));
  ck_assert (bx_fair_enter (fair, 1, -1));
  pthread_t t;
  struct waiter w;
  start (&t, &w, fair, 1, 1); /* past uid 1's share: waits, with runs free */
  /* Another uid runs at once. */
  ck_assert (bx_fair_enter (fair, 2, -1));
  bx_fair_leave (fair, 1);
  pthread_join (t, NULL);
  ck_assert (w.admitted);
  bx_fair_leave (fair, 1);
  bx_fair_leave (fair, 1);
  bx_fair_leave (fair, 2);
  bx_fair_free (fair);
}
END_TEST

START_TEST (test_a_cancelled_waiter_leaves_taking_nothing)
{
  struct bx_fair *fair = bx_fair_new (1, 1);
  ck_assert (bx_fair_enter (fair, 1, -1));
  int cancel = eventfd (0, EFD_CLOEXEC);
  pthread_t t;
  struct waiter w = { .fair = fair, .uid = 2, .cancel_fd = cancel };
  pthread_create (&t, NULL, waiter_main, &w);
  until_waiting (fair, 1);
  uint64_t one = 1;
  ck_assert_int_eq (write (cancel, &one, sizeof one), sizeof one);
  pthread_join (t, NULL);
  ck_assert (!w.admitted);
  unsigned r, n;
  bx_fair_counts (fair, &r, &n);
  ck_assert_uint_eq (r, 1);
  ck_assert_uint_eq (n, 0);
  bx_fair_leave (fair, 1);
  ck_assert (bx_fair_enter (fair, 3, -1));
  bx_fair_leave (fair, 3);
  close (cancel);
  bx_fair_free (fair);
}
END_TEST

static struct bx_config *
parse (const char *text)
{
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (text, strlen (text), "t.yaml", &cfg, &err) == 0, "%s",
                 bx_error_msg (err));
  return cfg;
}

START_TEST (test_max_running_follows_the_runtime_slots)
{
  struct bx_config *cfg = parse ("max_connections: 10\n");
  ck_assert_uint_eq (cfg->max_running, 10);
  ck_assert_uint_eq (cfg->max_running_per_uid, 10);
  bx_config_free (cfg);
  cfg = parse ("runtime:\n  module: bwrap\n");
  ck_assert_uint_eq (cfg->max_running, 16);
  ck_assert_uint_eq (cfg->max_running_per_uid, 8);
  bx_config_free (cfg);
  cfg = parse ("runtime:\n  module: bwrap\n  options:\n    slots: 6\n");
  ck_assert_uint_eq (cfg->max_running, 6);
  ck_assert_uint_eq (cfg->max_running_per_uid, 3);
  bx_config_free (cfg);
  cfg = parse ("max_running: 4\nmax_running_per_uid: 4\nruntime:\n  module: bwrap\n");
  ck_assert_uint_eq (cfg->max_running, 4);
  ck_assert_uint_eq (cfg->max_running_per_uid, 4);
  bx_config_free (cfg);

  const char *text = "max_running: 32\nruntime:\n  module: bwrap\n";
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_config_parse (text, strlen (text), "t.yaml", &cfg, &err), -1);
  ck_assert_str_eq (bx_error_msg (err),
                    "t.yaml:1:14: max_running 32 is more than the runtime's 16 slots: expected at "
                    "most 16, or calls past the slots would wait in the module, outside fair "
                    "admission");
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("broker_fair");
  TCase *tc = tcase_create ("fair");
  tcase_add_test (tc, test_a_run_goes_to_the_uid_running_the_fewest);
  tcase_add_test (tc, test_one_uid_waits_past_its_share_while_others_run);
  tcase_add_test (tc, test_a_cancelled_waiter_leaves_taking_nothing);
  tcase_add_test (tc, test_max_running_follows_the_runtime_slots);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/* Fair admission (fair.h): at most MAX runs, at most PER_UID for one uid; a run that ends
 * goes to the waiting call whose uid runs the fewest, the oldest among equals; a cancelled
 * waiter leaves taking nothing.  And the config's defaults for max_running. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

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

/* ---- The queue of connections (bx_fair_queue). ------------------------------------------ */

/* A connection waiting in the queue: the test holds the client's end. */
struct queued
{
  struct bx_fair *fair;
  int64_t uid;
  int64_t deadline;
  int server_end, client_end;
  enum bx_fair_wait ended;
  int order;
};

static void *
queued_main (void *arg)
{
  struct queued *q = arg;
  q->ended = bx_fair_queue (q->fair, q->uid, q->server_end, q->deadline, 4, 3);
  pthread_mutex_lock (&order_lock);
  q->order = ++order_next;
  pthread_mutex_unlock (&order_lock);
  return NULL;
}

static void
start_queued (pthread_t *t, struct queued *q, struct bx_fair *fair, int64_t uid,
              unsigned now_waiting)
{
  int sv[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  *q = (struct queued){
    .fair = fair, .uid = uid, .deadline = BX_NO_DEADLINE, .server_end = sv[0], .client_end = sv[1]
  };
  /* The client has sent its request: data to read must not end the wait. */
  ck_assert_int_eq (write (q->client_end, "request", 7), 7);
  pthread_create (t, NULL, queued_main, q);
  until_waiting (fair, now_waiting);
}

static void
end_queued (struct queued *q)
{
  close (q->server_end);
  if (q->client_end >= 0)
    close (q->client_end);
}

START_TEST (test_the_queue_admits_one_uid_in_order)
{
  order_next = 0;
  struct bx_fair *fair = bx_fair_new (1, 1);
  ck_assert_int_eq (bx_fair_queue (fair, 1, -1, BX_NO_DEADLINE, 4, 3), BX_FAIR_ADMITTED);
  pthread_t t[3];
  struct queued q[3];
  for (int i = 0; i < 3; i++)
    start_queued (&t[i], &q[i], fair, 1, (unsigned)i + 1);
  for (int i = 0; i < 3; i++)
    {
      bx_fair_leave (fair, 1);
      pthread_join (t[i], NULL);
      ck_assert_int_eq (q[i].ended, BX_FAIR_ADMITTED);
      ck_assert_int_eq (q[i].order, i + 1);
    }
  bx_fair_leave (fair, 1);
  for (int i = 0; i < 3; i++)
    end_queued (&q[i]);
  bx_fair_free (fair);
}
END_TEST

START_TEST (test_the_queue_is_bounded_in_all_and_per_uid)
{
  /* One place, taken; at most 4 wait, at most 3 of one uid. */
  struct bx_fair *fair = bx_fair_new (1, 1);
  ck_assert_int_eq (bx_fair_queue (fair, 1, -1, BX_NO_DEADLINE, 4, 3), BX_FAIR_ADMITTED);
  pthread_t t[4];
  struct queued q[4];
  for (int i = 0; i < 3; i++)
    start_queued (&t[i], &q[i], fair, 1, (unsigned)i + 1);
  /* uid 1 has its 3 waiting: its fourth is refused at once, another uid's may wait. */
  ck_assert_int_eq (bx_fair_queue (fair, 1, -1, BX_NO_DEADLINE, 4, 3), BX_FAIR_FULL);
  start_queued (&t[3], &q[3], fair, 2, 4);
  /* 4 wait: the queue is full for everyone. */
  ck_assert_int_eq (bx_fair_queue (fair, 3, -1, BX_NO_DEADLINE, 4, 3), BX_FAIR_FULL);
  unsigned r, n;
  bx_fair_counts (fair, &r, &n);
  ck_assert_uint_eq (r, 1);
  ck_assert_uint_eq (n, 4);
  /* Closing ends every wait, taking nothing. */
  bx_fair_close (fair);
  for (int i = 0; i < 4; i++)
    {
      pthread_join (t[i], NULL);
      ck_assert_int_eq (q[i].ended, BX_FAIR_CLOSED);
      end_queued (&q[i]);
    }
  bx_fair_counts (fair, &r, &n);
  ck_assert_uint_eq (r, 1);
  ck_assert_uint_eq (n, 0);
  ck_assert_int_eq (bx_fair_queue (fair, 1, -1, BX_NO_DEADLINE, 4, 3), BX_FAIR_CLOSED);
  bx_fair_leave (fair, 1);
  bx_fair_free (fair);
}
END_TEST

START_TEST (test_a_wait_past_its_deadline_takes_nothing)
{
  struct bx_fair *fair = bx_fair_new (1, 1);
  ck_assert_int_eq (bx_fair_queue (fair, 1, -1, BX_NO_DEADLINE, 4, 3), BX_FAIR_ADMITTED);
  /* A deadline already passed: no wait at all. */
  ck_assert_int_eq (bx_fair_queue (fair, 2, -1, bx_deadline_in (0), 4, 3), BX_FAIR_TIMED_OUT);
  ck_assert_int_eq (bx_fair_queue (fair, 2, -1, bx_deadline_in (50), 4, 3), BX_FAIR_TIMED_OUT);
  unsigned r, n;
  bx_fair_counts (fair, &r, &n);
  ck_assert_uint_eq (r, 1);
  ck_assert_uint_eq (n, 0);
  bx_fair_leave (fair, 1);
  ck_assert_int_eq (bx_fair_queue (fair, 2, -1, bx_deadline_in (0), 4, 3), BX_FAIR_ADMITTED);
  bx_fair_leave (fair, 2);
  bx_fair_free (fair);
}
END_TEST

START_TEST (test_a_client_that_hangs_up_leaves_the_queue_at_once)
{
  order_next = 0;
  struct bx_fair *fair = bx_fair_new (1, 1);
  ck_assert_int_eq (bx_fair_queue (fair, 1, -1, BX_NO_DEADLINE, 4, 3), BX_FAIR_ADMITTED);
  pthread_t t[2];
  struct queued q[2];
  start_queued (&t[0], &q[0], fair, 2, 1);
  start_queued (&t[1], &q[1], fair, 3, 2);
  /* The first in line hangs up: it leaves while the place is still taken. */
  close (q[0].client_end);
  q[0].client_end = -1;
  pthread_join (t[0], NULL);
  ck_assert_int_eq (q[0].ended, BX_FAIR_HUNG_UP);
  unsigned r, n;
  bx_fair_counts (fair, &r, &n);
  ck_assert_uint_eq (r, 1);
  ck_assert_uint_eq (n, 1);
  /* The place goes to the next, which still waits for it. */
  bx_fair_leave (fair, 1);
  pthread_join (t[1], NULL);
  ck_assert_int_eq (q[1].ended, BX_FAIR_ADMITTED);
  bx_fair_leave (fair, 3);
  end_queued (&q[0]);
  end_queued (&q[1]);
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

START_TEST (test_queue_ms_is_read_and_checked)
{
  struct bx_config *cfg = parse ("max_connections: 10\n");
  ck_assert_int_eq (cfg->queue_ms, BX_DEFAULT_QUEUE_MS);
  bx_config_free (cfg);
  cfg = parse ("queue_ms: 0\n");
  ck_assert_int_eq (cfg->queue_ms, 0);
  bx_config_free (cfg);
  cfg = parse ("queue_ms: 2s\n");
  ck_assert_int_eq (cfg->queue_ms, 2000);
  bx_config_free (cfg);
  const char *text = "max_connections: 10\nqueue_ms: -5\n";
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_config_parse (text, strlen (text), "t.yaml", &cfg, &err), -1);
  ck_assert_msg (strncmp (bx_error_msg (err), "t.yaml:2:11: \"queue_ms\"", 22) == 0, "%s",
                 bx_error_msg (err));
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
  tcase_add_test (tc, test_the_queue_admits_one_uid_in_order);
  tcase_add_test (tc, test_the_queue_is_bounded_in_all_and_per_uid);
  tcase_add_test (tc, test_a_wait_past_its_deadline_takes_nothing);
  tcase_add_test (tc, test_a_client_that_hangs_up_leaves_the_queue_at_once);
  tcase_add_test (tc, test_queue_ms_is_read_and_checked);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)

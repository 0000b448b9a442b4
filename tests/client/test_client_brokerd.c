/* SPDX-License-Identifier: Apache-2.0 */
/* The client and the real brokerd agree: brokerd runs as a process with fake.so (echo mode)
 * over a real socket, and the library and the boxmaker CLI call it: a result with its
 * labels, a denial, bad arguments, many clients at once, brokerd's "busy" refusal (an error
 * with an empty id), and brokerd gone. */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include <boxmaker/client.h>

#include "cli_run.h"
#include "brokerd_fixture.h"
#include "test_main.h"
#include "tree.h"

extern char **environ;

static struct bx_test_brokerd bd;
/* The granted folder. */
static char data[128];

/* Starts brokerd with fake.so in echo mode (EXTRA_OPTIONS: more fake options, indented) and
 * a read_file/write_file grant on a scratch folder; MAX_CONNECTIONS as given. */
/* Config keys start_brokerd adds at the top level ("queue_ms: 0\n"). */
static const char *root_extra = "";

static void
start_brokerd (const char *extra_options, unsigned max_connections)
{
  bx_test_brokerd_init (&bd);
  snprintf (data, sizeof data, "%s/data", bd.dir);
  ck_assert_int_eq (mkdir (data, 0755), 0);
  FILE *f = fopen (bd.config, "w");
  ck_assert_ptr_nonnull (f);
  fprintf (f,
           "socket: %s\nhome: %s/home\nmax_connections: %u\naudit: %s\n%s"
           "runtime:\n  module: fake\n  options:\n    mode: echo\n%s"
           "grants:\n  - tools: [read_file, write_file]\n    paths: [%s]\n    class: internal\n",
           bd.sock, bd.dir, max_connections, bd.audit, root_extra, extra_options, data);
  root_extra = "";
  fclose (f);
  bx_test_brokerd_start (&bd);
}

static void
stop_brokerd (void)
{
  if (bd.pid > 0)
    bx_test_brokerd_stop (&bd);
}

/* The folder goes when the test's process exits. */
static void
teardown (void)
{
  stop_brokerd ();
}

static int logs;
static char last_line[1024];

static void
count_log (const char *line, void *data)
{
  logs++;
  snprintf (last_line, sizeof last_line, "%s", line);
}

/* Whether call reports a first "brokerd is busy" instead of trying again. */
static bool no_busy_retry;

static void
call (const char *id, const char *tool, const char *args_json, struct bx_client_response *r)
{
  struct bx_client_options opts = { .socket = bd.sock,
                                    .timeout_ms = 10000,
                                    .log = count_log,
                                    .data = NULL,
                                    .no_busy_retry = no_busy_retry };
  json_auto_t *args = json_loads (args_json, 0, NULL);
  ck_assert_ptr_nonnull (args);
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_client_call (&opts, id, "s1", tool, args, r, &err), 0);
}

START_TEST (test_a_granted_call_returns_brokerds_result_with_its_labels)
{
  start_brokerd ("", 16);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/notes.txt\"}", data);
  struct bx_client_response r;
  logs = 0;
  call ("c-1", "read_file", args, &r);
  ck_assert_int_eq (r.exit, 11);
  ck_assert_int_eq (r.kind, BX_CLIENT_RESULT);
  ck_assert_str_eq (r.class, "internal");
  ck_assert (!r.untrusted);
  ck_assert (!r.truncated);
  /* fake.so echoes the spec brokerd built from the call the client sent. */
  json_auto_t *spec = json_loadb (r.content, r.content_len, 0, NULL);
  ck_assert_ptr_nonnull (spec);
  ck_assert_str_eq (json_string_value (json_object_get (spec, "call")), "c-1");
  ck_assert_str_eq (json_string_value (json_object_get (spec, "session")), "s1");
  ck_assert_str_eq (json_string_value (json_object_get (spec, "tool")), "read_file");
  ck_assert_int_eq (logs, 0);
  bx_client_response_free (&r);
}
END_TEST

START_TEST (test_a_call_outside_the_grants_is_denied_and_not_logged)
{
  start_brokerd ("", 16);
  struct bx_client_response r;
  logs = 0;
  call ("c-2", "read_file", "{\"path\":\"/etc/passwd\"}", &r);
  ck_assert_int_eq (r.exit, 11);
  ck_assert_int_eq (r.kind, BX_CLIENT_DENIED);
  ck_assert_str_eq (r.message, "read_file: /etc/passwd is outside every granted folder");
  ck_assert_int_eq (logs, 0);
  bx_client_response_free (&r);
}
END_TEST

START_TEST (test_bad_arguments_come_back_as_brokerds_answer_not_an_outage)
{
  start_brokerd ("", 16);
  struct bx_client_response r;
  logs = 0;
  call ("c-3", "read_file", "{\"path\":5}", &r);
  ck_assert_int_eq (r.exit, 11);
  ck_assert (!r.unavailable);
  ck_assert_int_ne (r.kind, BX_CLIENT_RESULT);
  ck_assert_msg (strstr (r.message, "path") != NULL, "message: %s", r.message);
  bx_client_response_free (&r);
  call ("c-4", "format_disk", "{}", &r);
  ck_assert_int_eq (r.exit, 11);
  ck_assert (!r.unavailable);
  ck_assert_int_ne (r.kind, BX_CLIENT_RESULT);
  ck_assert_int_eq (logs, 0);
  bx_client_response_free (&r);
}
END_TEST

struct worker
{
  int index;
  int results;
};

static void *
many_calls (void *p)
{
  struct worker *w = p;
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/f\"}", data);
  json_auto_t *a = json_loads (args, 0, NULL);
  struct bx_client_options opts = { .socket = bd.sock, .timeout_ms = 10000, .log = count_log };
  for (int i = 0; i < 25; i++)
    {
      char id[32];
      snprintf (id, sizeof id, "w%d-%d", w->index, i);
      struct bx_client_response r;
      bx_error err = NULL;
      if (bx_client_call (&opts, id, "s1", "read_file", a, &r, &err) < 0)
        {
          bx_error_free (&err);
          continue;
        }
      json_auto_t *spec = r.kind == BX_CLIENT_RESULT ? json_loads (r.content, 0, NULL) : NULL;
      const char *echoed = json_string_value (json_object_get (spec, "call"));
      if (echoed != NULL && strcmp (echoed, id) == 0)
        w->results++;
      bx_client_response_free (&r);
    }
  return NULL;
}

START_TEST (test_eight_clients_at_once_each_get_their_own_answers)
{
  start_brokerd ("", 64);
  pthread_t t[8];
  struct worker w[8];
  for (int i = 0; i < 8; i++)
    {
      w[i] = (struct worker){ .index = i };
      ck_assert_int_eq (pthread_create (&t[i], NULL, many_calls, &w[i]), 0);
    }
  for (int i = 0; i < 8; i++)
    {
      pthread_join (t[i], NULL);
      ck_assert_int_eq (w[i].results, 25);
    }
}
END_TEST

/* The call that takes the one connection.  start_brokerd's probe may still hold it for a
 * moment: refused meanwhile, it asks again. */
static void *
slow_call (void *p)
{
  struct bx_client_response *r = p;
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/slow\"}", data);
  for (;;)
    {
      call ("slow", "read_file", args, r);
      if (!r->unavailable || strstr (last_line, "brokerd is busy") == NULL)
        return NULL;
      bx_client_response_free (r);
      usleep (20 * 1000);
    }
}

/* Waits until the audit log says a call runs (30 s at most: a hang, not a slow machine). */
static void
wait_running (void)
{
  for (int i = 0; i < 3000; i++)
    {
      cleanup_free char *audit = read_text (bd.audit);
      if (audit != NULL && strstr (audit, "\"outcome\":\"running\"") != NULL)
        return;
      usleep (10 * 1000);
    }
  ck_abort_msg ("no call ran within 30 s");
}

START_TEST (test_brokerd_busy_is_reported_with_its_detail)
{
  /* One connection at most, held by a call that takes 8 s, and no time in the queue: the
   * next is refused at once with an error that carries no id (brokerd did not read the
   * request), and reported without asking again. */
  root_extra = "queue_ms: 0\n";
  start_brokerd ("    delay_ms: 8000\n", 1);
  struct bx_client_response slow, r;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, slow_call, &slow), 0);
  wait_running ();
  logs = 0;
  int64_t start = bx_now_ms ();
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/fast\"}", data);
  no_busy_retry = true;
  call ("fast", "read_file", args, &r);
  no_busy_retry = false;
  int64_t took = bx_now_ms () - start;
  pthread_join (t, NULL);
  ck_assert_msg (slow.kind == BX_CLIENT_RESULT, "the slow call: %s", slow.message);
  ck_assert (r.unavailable);
  /* 7 when the request was written before brokerd closed, 4 when brokerd closed first; the
   * detail is there either way. */
  ck_assert_msg (r.exit == 7 || r.exit == 4, "exit %d", r.exit);
  ck_assert_int_eq (logs, 1);
  ck_assert_msg (strstr (last_line, "the broker reported an error: brokerd is busy") != NULL,
                 "line: %s", last_line);
  /* At once: not after the slow call's 8 s, with room for a loaded machine. */
  ck_assert_msg (took < 4000, "the refusal took %lld ms", (long long)took);
  bx_client_response_free (&slow);
  bx_client_response_free (&r);
}
END_TEST

START_TEST (test_a_call_past_max_connections_waits_for_its_turn)
{
  /* The one connection is held by a call that takes a second: the next waits in brokerd's
   * queue (queue_ms, 10 s by default) and is answered once the first ends, never busy. */
  start_brokerd ("    delay_ms: 1000\n", 1);
  struct bx_client_response slow, r;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, slow_call, &slow), 0);
  wait_running ();
  logs = 0;
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/fast\"}", data);
  no_busy_retry = true;
  call ("fast", "read_file", args, &r);
  no_busy_retry = false;
  pthread_join (t, NULL);
  ck_assert_msg (slow.kind == BX_CLIENT_RESULT, "the slow call: %s", slow.message);
  ck_assert_msg (r.kind == BX_CLIENT_RESULT, "the waiting call: %s (%s)", r.message, last_line);
  ck_assert_int_eq (logs, 0);
  bx_client_response_free (&slow);
  bx_client_response_free (&r);
}
END_TEST

/* The slow call of the test below, cancellable. */
struct cancellable
{
  struct bx_client_cancel *cancel;
  struct bx_client_response r;
};

static void *
cancellable_call (void *p)
{
  struct cancellable *c = p;
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/slow\"}", data);
  struct bx_client_options opts
      = { .socket = bd.sock, .timeout_ms = 120000, .log = count_log, .cancel = c->cancel };
  json_auto_t *a = json_loads (args, 0, NULL);
  cleanup_error bx_error err = NULL;
  bx_client_call (&opts, "slow", "s1", "read_file", a, &c->r, &err);
  return NULL;
}

static void *
fast_call (void *p)
{
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/fast\"}", data);
  call ("fast", "read_file", args, p);
  return NULL;
}

/* How many "brokerd is busy" lines the audit log holds. */
static int
busy_lines (void)
{
  cleanup_free char *audit = read_text (bd.audit);
  int n = 0;
  for (const char *p = audit; p != NULL && (p = strstr (p, "brokerd is busy")) != NULL; p++)
    n++;
  return n;
}

START_TEST (test_the_library_asks_again_after_busy)
{
  /* No time in the queue: the call past the one connection is refused, and the library asks
   * again after a pause.  Once the connection is free (the slow call cancelled), the next
   * attempt is answered (in the run's 3 s): the caller sees the result and nothing is
   * logged. */
  root_extra = "queue_ms: 0\n";
  start_brokerd ("    delay_ms: 3000\n", 1);
  struct cancellable slow = { .cancel = bx_client_cancel_new () };
  pthread_t ts, tf;
  ck_assert_int_eq (pthread_create (&ts, NULL, cancellable_call, &slow), 0);
  wait_running ();
  logs = 0;
  struct bx_client_response r;
  ck_assert_int_eq (pthread_create (&tf, NULL, fast_call, &r), 0);
  for (int i = 0; i < 6000 && busy_lines () == 0; i++)
    usleep (10 * 1000);
  ck_assert_int_gt (busy_lines (), 0);
  bx_client_cancel (slow.cancel);
  pthread_join (ts, NULL);
  pthread_join (tf, NULL);
  ck_assert (slow.r.cancelled);
  ck_assert_msg (r.kind == BX_CLIENT_RESULT, "the refused call: %s (%s)", r.message, last_line);
  ck_assert_int_eq (logs, 0);
  bx_client_response_free (&slow.r);
  bx_client_response_free (&r);
  bx_client_cancel_free (slow.cancel);
}
END_TEST

START_TEST (test_the_library_reports_busy_once_its_retries_are_spent)
{
  /* The one connection stays taken and nothing waits: the first attempt and each of the
   * BX_CLIENT_BUSY_RETRIES more are refused, and only the last refusal is reported, with
   * its one log line. */
  root_extra = "queue_ms: 0\n";
  start_brokerd ("    delay_ms: 60000\n", 1);
  struct cancellable slow = { .cancel = bx_client_cancel_new () };
  pthread_t ts;
  ck_assert_int_eq (pthread_create (&ts, NULL, cancellable_call, &slow), 0);
  wait_running ();
  logs = 0;
  struct bx_client_response r;
  fast_call (&r);
  ck_assert (r.unavailable);
  ck_assert_int_eq (logs, 1);
  ck_assert_msg (strstr (last_line, "brokerd is busy") != NULL, "line: %s", last_line);
  ck_assert_int_eq (busy_lines (), 1 + BX_CLIENT_BUSY_RETRIES);
  bx_client_cancel (slow.cancel);
  pthread_join (ts, NULL);
  ck_assert (slow.r.cancelled);
  bx_client_response_free (&slow.r);
  bx_client_response_free (&r);
  bx_client_cancel_free (slow.cancel);
}
END_TEST

START_TEST (test_the_cli_against_brokerd_then_without_it)
{
  start_brokerd ("", 16);
  struct cli_run run;
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/x\"}", data);
  cli_run (BOXMAKER_PATH, (const char *[]){ "call", "read_file", args, "--socket", bd.sock, NULL },
           &run);
  ck_assert_msg (run.status == 0, "status %d: %s", run.status, run.err);
  ck_assert_str_eq (run.err, "boxmaker: result: class=internal untrusted=false truncated=false\n");
  ck_assert_ptr_nonnull (strstr (run.out, "\"tool\":\"read_file\""));

  cli_run (BOXMAKER_PATH,
           (const char *[]){ "call", "write_file", "{\"path\":\"/etc/x\",\"content\":\"\"}",
                             "--socket", bd.sock, NULL },
           &run);
  ck_assert_int_eq (run.status, 1);
  ck_assert_str_eq (run.err,
                    "boxmaker: denied: write_file: /etc/x is outside every granted folder\n");

  stop_brokerd (); /* it removes its socket */
  cli_run (BOXMAKER_PATH, (const char *[]){ "call", "read_file", args, "--socket", bd.sock, NULL },
           &run);
  ck_assert_int_eq (run.status, 3);
  cleanup_free char *want
      = bx_xasprintf ("boxmaker: the tool broker is unavailable: cannot connect to %s: connect: "
                      "No such file or directory; see docs/runbook.md#broker-unavailable\n",
                      bd.sock);
  ck_assert_str_eq (run.err, want);
}
END_TEST

static Suite *
suite (void)
{
  Suite *s = suite_create ("client_brokerd");
  TCase *tc = tcase_create ("brokerd");
  tcase_add_checked_fixture (tc, NULL, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_a_granted_call_returns_brokerds_result_with_its_labels);
  tcase_add_test (tc, test_a_call_outside_the_grants_is_denied_and_not_logged);
  tcase_add_test (tc, test_bad_arguments_come_back_as_brokerds_answer_not_an_outage);
  tcase_add_test (tc, test_eight_clients_at_once_each_get_their_own_answers);
  tcase_add_test (tc, test_brokerd_busy_is_reported_with_its_detail);
  tcase_add_test (tc, test_a_call_past_max_connections_waits_for_its_turn);
  tcase_add_test (tc, test_the_library_asks_again_after_busy);
  tcase_add_test (tc, test_the_library_reports_busy_once_its_retries_are_spent);
  tcase_add_test (tc, test_the_cli_against_brokerd_then_without_it);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (suite)

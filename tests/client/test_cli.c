/* SPDX-License-Identifier: Apache-2.0 */
/* The boxmaker CLI as a program: what it prints and each exit status (0 result, 1 denied or
 * failed, 2 usage, 3 broker unavailable), against the scripted fake brokerd. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/message.h"

#include "cli_run.h"
#include "fake_server.h"
#include "test_main.h"

static struct cli_run run;

static void
run_cli (const char *const *args)
{
  cli_run (BOXMAKER_PATH, args, &run);
}

#define ASSERT_STATUS(n)                                                                           \
  ck_assert_msg (run.status == (n), "status %d, stderr: %s", run.status, run.err)

/* ARG: the JSON text of one frame to answer with after reading the request. */
static void
script_answer (struct fake_server *s, int fd)
{
  fake_read_request (s, fd);
  for (const char *const *step = s->arg; *step != NULL; step++)
    fake_send_json (fd, *step);
  fake_wait_close (s, fd);
}

static struct fake_server srv;

static void
teardown (void)
{
  fake_server_stop (&srv);
}

/* The id in the request the fake server received. */
static const char *
request_field (const char *field)
{
  fake_server_join (&srv);
  ck_assert_ptr_nonnull (srv.request);
  if (strcmp (field, "id") == 0)
    return json_string_value (json_object_get (srv.request, "id"));
  return json_string_value (json_object_get (json_object_get (srv.request, "msg"), field));
}

static const char *const result_frame[]
    = { "{\"v\":1,\"id\":\"ID\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":"
        "\"hello\\nworld\\n\",\"class\":\"private\",\"untrusted\":false,\"truncated\":false}}",
        NULL };

/* The fake answers with the id it was given; the CLI's generated id is not known in advance,
 * so these tests pass --call ID. */
START_TEST (test_a_result_prints_the_content_on_stdout_and_exits_0)
{
  fake_server_start (&srv, script_answer, result_frame);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--socket", srv.path,
                             "--call", "ID", NULL });
  ASSERT_STATUS (0);
  ck_assert_uint_eq (run.out_len, 12);
  ck_assert_str_eq (run.out, "hello\nworld\n");
  ck_assert_str_eq (run.err, "boxmaker: result: class=private untrusted=false truncated=false\n");
  ck_assert_str_eq (request_field ("tool"), "read_file");
  ck_assert_str_eq (request_field ("session"), "cli");
}
END_TEST

START_TEST (test_json_output_prints_the_whole_answer)
{
  fake_server_start (&srv, script_answer, result_frame);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--socket=", NULL });
  ASSERT_STATUS (2); /* an empty --socket is a usage error */
  cleanup_free char *sock = bx_xasprintf ("--socket=%s", srv.path);
  run_cli ((const char *[]){ "call", "--json", "read_file", "{\"path\":\"/x\"}", sock, "--call=ID",
                             NULL });
  ASSERT_STATUS (0);
  ck_assert_str_eq (run.out, "{\"type\":\"result\",\"content\":\"hello\\nworld\\n\",\"class\":"
                             "\"private\",\"untrusted\":false,\"truncated\":false}\n");
  ck_assert_str_eq (run.err, "");
}
END_TEST

START_TEST (test_the_generated_call_id_is_valid_and_the_session_is_passed)
{
  /* The fake's answer carries another id, so the call ends unavailable (exit 6); what is
   * checked here is the request. */
  fake_server_start (&srv, script_answer, result_frame);
  run_cli ((const char *[]){ "call", "shell", "{\"command\":\"ls\"}", "--socket", srv.path,
                             "--session", "agent-7", NULL });
  ASSERT_STATUS (3);
  const char *id = request_field ("id");
  ck_assert_msg (bx_valid_id (id), "id %s", id);
  ck_assert_msg (strncmp (id, "cli-", 4) == 0, "id %s", id);
  ck_assert_str_eq (request_field ("call"), id);
  ck_assert_str_eq (request_field ("session"), "agent-7");
  ck_assert_str_eq (request_field ("tool"), "shell");
  ck_assert_ptr_nonnull (strstr (run.err, "an answer for request ID, not cli-"));
}
END_TEST

START_TEST (test_a_denial_exits_1_with_the_reason_on_stderr)
{
  static const char *const denied[]
      = { "{\"v\":1,\"id\":\"ID\",\"final\":true,\"msg\":{\"type\":\"denied\",\"reason\":"
          "\"read_file: /etc/passwd is outside every granted folder\"}}",
          NULL };
  fake_server_start (&srv, script_answer, denied);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/etc/passwd\"}", "--socket",
                             srv.path, "--call", "ID", NULL });
  ASSERT_STATUS (1);
  ck_assert_str_eq (run.out, "");
  ck_assert_str_eq (run.err,
                    "boxmaker: denied: read_file: /etc/passwd is outside every granted folder\n");
}
END_TEST

START_TEST (test_a_failure_exits_1_with_the_message_on_stderr)
{
  static const char *const failed[]
      = { "{\"v\":1,\"id\":\"ID\",\"final\":true,\"msg\":{\"type\":\"failed\",\"message\":"
          "\"the tool did not finish in time\"}}",
          NULL };
  fake_server_start (&srv, script_answer, failed);
  run_cli ((const char *[]){ "call", "shell", "{\"command\":\"sleep 99\"}", "--socket", srv.path,
                             "--call", "ID", NULL });
  ASSERT_STATUS (1);
  ck_assert_str_eq (run.err, "boxmaker: failed: the tool did not finish in time\n");
}
END_TEST

START_TEST (test_a_pending_frame_is_shown_while_waiting)
{
  char *pending = fake_format ("{\"v\":1,\"id\":\"ID\",\"final\":false,\"msg\":{\"type\":"
                               "\"pending_approval\",\"approval\":\"run ls?\",\"expires\":0}}");
  const char *const steps[] = { pending, result_frame[0], NULL };
  fake_server_start (&srv, script_answer, steps);
  run_cli ((const char *[]){ "call", "shell", "{\"command\":\"ls\"}", "--socket", srv.path,
                             "--call", "ID", NULL });
  ASSERT_STATUS (0);
  ck_assert_ptr_nonnull (
      strstr (run.err, "boxmaker: waiting for approval: run ls? (expires 1970-01-01T00:00:00Z)\n"));
  fake_server_join (&srv); /* the script reads STEPS until the CLI closes */
  free (pending);
}
END_TEST

/* ---- 3: unavailable ------------------------------------------------------------------------ */

static void
assert_unavailable_line (const char *why)
{
  ASSERT_STATUS (3);
  ck_assert_str_eq (run.out, "");
  cleanup_free char *want = bx_xasprintf ("boxmaker: the tool broker is unavailable: %s", why);
  ck_assert_msg (strncmp (run.err, want, strlen (want)) == 0, "stderr: %s", run.err);
  ck_assert_msg (strstr (run.err, "; see docs/runbook.md#broker-unavailable\n") != NULL
                     && strchr (run.err, '\n') == run.err + strlen (run.err) - 1,
                 "stderr: %s", run.err);
}

START_TEST (test_no_broker_exits_3)
{
  fake_server_start (&srv, NULL, NULL);
  cleanup_free char *missing = bx_xasprintf ("%s/none.sock", srv.dir);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--socket", missing, NULL });
  cleanup_free char *why = bx_xasprintf ("cannot connect to %s", missing);
  assert_unavailable_line (why);
}
END_TEST

START_TEST (test_a_broker_sending_garbage_exits_3)
{
  static const char *const garbage[] = { "this is not json", NULL };
  fake_server_start (&srv, script_answer, garbage);
  run_cli (
      (const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--socket", srv.path, NULL });
  assert_unavailable_line ("bad frame: ");
}
END_TEST

START_TEST (test_a_silent_broker_exits_3_at_the_timeout)
{
  static const char *const nothing[] = { NULL };
  fake_server_start (&srv, script_answer, nothing);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--socket", srv.path,
                             "--timeout-ms", "200", NULL });
  assert_unavailable_line ("no answer in time");
}
END_TEST

/* Zero is the default deadline (as the library has it), not a call over before it starts. */
START_TEST (test_a_zero_timeout_is_the_default_and_a_huge_one_exits_3)
{
  fake_server_start (&srv, script_answer, result_frame);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--socket", srv.path,
                             "--call", "ID", "--timeout-ms", "0", NULL });
  ASSERT_STATUS (0);
  ck_assert_str_eq (run.out, "hello\nworld\n");
  fake_server_stop (&srv);
  static const char *const nothing[] = { NULL };
  fake_server_start (&srv, script_answer, nothing);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--socket", srv.path,
                             "--timeout-ms", "18446744073709551615", NULL });
  assert_unavailable_line ("the timeout is too large");
}
END_TEST

START_TEST (test_the_socket_defaults_to_BOXMAKER_SOCKET)
{
  fake_server_start (&srv, script_answer, result_frame);
  setenv ("BOXMAKER_SOCKET", srv.path, 1);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--call", "ID", NULL });
  unsetenv ("BOXMAKER_SOCKET");
  ASSERT_STATUS (0);
  ck_assert_str_eq (run.out, "hello\nworld\n");
  /* --socket wins over the variable. */
  fake_server_stop (&srv);
  fake_server_start (&srv, script_answer, result_frame);
  setenv ("BOXMAKER_SOCKET", "/nonexistent/broker.sock", 1);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--call", "ID", "--socket",
                             srv.path, NULL });
  unsetenv ("BOXMAKER_SOCKET");
  ASSERT_STATUS (0);
}
END_TEST

/* ---- 2: usage ----------------------------------------------------------------------------- */

static void
assert_usage (const char *const *args, const char *msg)
{
  run_cli (args);
  ASSERT_STATUS (2);
  ck_assert_str_eq (run.out, "");
  ck_assert_msg (strstr (run.err, msg) != NULL, "stderr: %s", run.err);
}

START_TEST (test_usage_errors_exit_2_and_say_what_is_wrong)
{
  assert_usage ((const char *[]){ NULL }, "usage: boxmaker call TOOL");
  assert_usage ((const char *[]){ "frobnicate", NULL }, "unknown command 'frobnicate'");
  assert_usage ((const char *[]){ "call", NULL }, "call needs a TOOL and its JSON arguments");
  assert_usage ((const char *[]){ "call", "read_file", NULL }, "call needs the tool's JSON");
  assert_usage ((const char *[]){ "call", "read_file", "{}", "extra", NULL },
                "unexpected argument 'extra'");
  assert_usage ((const char *[]){ "call", "read_file", "{}", "--sockets", "x", NULL },
                "unknown option '--sockets'");
  assert_usage ((const char *[]){ "call", "read_file", "{}", "-x", NULL }, "unknown option '-x'");
  assert_usage ((const char *[]){ "call", "read_file", "{}", "--socket", NULL },
                "--socket needs a value");
  assert_usage ((const char *[]){ "call", "read_file", "{\"path\":", NULL },
                "the arguments are not valid JSON");
  assert_usage ((const char *[]){ "call", "read_file", "{\"a\":1,\"a\":2}", NULL },
                "the arguments are not valid JSON: duplicate object key");
  assert_usage ((const char *[]){ "call", "read_file", "[\"/x\"]", NULL },
                "the arguments must be a JSON object");
  assert_usage ((const char *[]){ "call", "read_file", "\"/x\"", NULL },
                "the arguments are not valid JSON");
  assert_usage ((const char *[]){ "call", "read_file", "{}", "--timeout-ms", "abc", NULL },
                "--timeout-ms must be a whole number of milliseconds, not 'abc'");
  assert_usage ((const char *[]){ "call", "read_file", "{}", "--timeout-ms", "-5", NULL },
                "--timeout-ms must be a whole number");
  assert_usage (
      (const char *[]){ "call", "read_file", "{}", "--timeout-ms", "99999999999999999999", NULL },
      "--timeout-ms must be a whole number");
  assert_usage ((const char *[]){ "call", "read_file", "{}", "--call", "a/b", NULL },
                "--call must be 1 to 64 of [A-Za-z0-9_.-], not 'a/b'");
  assert_usage ((const char *[]){ "call", "read_file", "{}", "--session", "", NULL },
                "--session must be 1 to 64");
}
END_TEST

START_TEST (test_help_and_version_exit_0)
{
  run_cli ((const char *[]){ "--help", NULL });
  ASSERT_STATUS (0);
  ck_assert_ptr_nonnull (strstr (run.out, "Exit status: 0 result, 1 denied or failed"));
  run_cli ((const char *[]){ "--version", NULL });
  ASSERT_STATUS (0);
  ck_assert_msg (strncmp (run.out, "boxmaker ", 9) == 0, "stdout: %s", run.out);
}
END_TEST

/* The arguments the fake server received, as JSON text. */
static char *
request_arguments (void)
{
  fake_server_join (&srv);
  ck_assert_ptr_nonnull (srv.request);
  return json_dumps (json_object_get (json_object_get (srv.request, "msg"), "arguments"),
                     JSON_COMPACT);
}

START_TEST (test_arguments_past_the_argument_limit_come_from_a_file)
{
  /* 300 KiB of content: more than the kernel takes as one argument (128 KiB). */
  char path[] = "/tmp/bx-cli-args-XXXXXX";
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  FILE *f = fdopen (fd, "w");
  fputs ("{\"path\":\"/x\",\"content\":\"", f);
  for (int i = 0; i < 300 * 1024; i++)
    fputc ('a' + i % 26, f);
  fputs ("\"}\n", f);
  fclose (f);
  fake_server_start (&srv, script_answer, result_frame);
  cleanup_free char *at = bx_xasprintf ("@%s", path);
  run_cli (
      (const char *[]){ "call", "write_file", at, "--socket", srv.path, "--call", "ID", NULL });
  unlink (path);
  ASSERT_STATUS (0);
  cleanup_free char *args = request_arguments ();
  ck_assert_uint_eq (strlen (args), strlen ("{\"path\":\"/x\",\"content\":\"\"}") + 300 * 1024);

  run_cli ((const char *[]){ "call", "read_file", "@/nonexistent/args.json", NULL });
  ASSERT_STATUS (2);
  ck_assert_str_eq (run.err, "boxmaker: cannot read the arguments from /nonexistent/args.json: "
                             "No such file or directory\n");
}
END_TEST

START_TEST (test_a_dash_reads_the_arguments_from_standard_input)
{
  fake_server_start (&srv, script_answer, result_frame);
  cleanup_free char *script
      = bx_xasprintf ("printf '{\"path\": \"/from/stdin\"}' | '%s' call read_file - --socket '%s' "
                      "--call ID",
                      BOXMAKER_PATH, srv.path);
  cli_run ("/bin/sh", (const char *[]){ "-c", script, NULL }, &run);
  ASSERT_STATUS (0);
  cleanup_free char *args = request_arguments ();
  ck_assert_str_eq (args, "{\"path\":\"/from/stdin\"}");
}
END_TEST

START_TEST (test_call_help_prints_the_usage)
{
  run_cli ((const char *[]){ "call", "--help", NULL });
  ASSERT_STATUS (0);
  ck_assert_ptr_nonnull (strstr (run.out, "usage: boxmaker call TOOL JSON|@FILE|-"));
  ck_assert_str_eq (run.err, "");
}
END_TEST

START_TEST (test_every_command_takes_help)
{
  static const char *const commands[][4] = {
    { "approvals", "--help", NULL },       { "approve", "--help", NULL },
    { "decline", "abc", "-h", NULL },      { "stats", "--help", NULL },
    { "audit", "verify", "--help", NULL },
  };
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    {
      run_cli ((const char *const *)commands[i]);
      ck_assert_msg (run.status == 0, "%s: status %d, stderr: %s", commands[i][0], run.status,
                     run.err);
      ck_assert_msg (strstr (run.out, "usage: boxmaker") != NULL, "%s: stdout: %s", commands[i][0],
                     run.out);
    }
  /* A flag's value is not a request for help: the reason "-h" goes to the admin socket. */
  setenv ("BOXMAKER_ADMIN_SOCKET", "/nonexistent/admin.sock", 1);
  run_cli ((const char *[]){ "decline", "abc", "--reason", "-h", NULL });
  unsetenv ("BOXMAKER_ADMIN_SOCKET");
  ASSERT_STATUS (3);
  ck_assert_msg (strstr (run.err, "/nonexistent/admin.sock") != NULL, "stderr: %s", run.err);
}
END_TEST

/* The server of a socket that is not brokerd's metrics socket: it closes at once (as
 * brokerd's call socket does when asked nothing) or says something else. */
static void
script_close (struct fake_server *s, int fd)
{
}

static void
script_say_hello (struct fake_server *s, int fd)
{
  fake_send_raw (fd, "hello\n", 6);
}

START_TEST (test_stats_refuses_what_is_not_the_metrics_socket)
{
  fake_server_start (&srv, script_close, NULL);
  run_cli ((const char *[]){ "stats", "--socket", srv.path, NULL });
  ASSERT_STATUS (3);
  ck_assert_str_eq (run.out, "");
  ck_assert_msg (strstr (run.err, "did not answer with metrics") != NULL, "stderr: %s", run.err);
  fake_server_stop (&srv);
  fake_server_start (&srv, script_say_hello, NULL);
  run_cli ((const char *[]){ "stats", "--metrics-socket", srv.path, NULL });
  ASSERT_STATUS (3);
  ck_assert_str_eq (run.out, "");
  ck_assert_msg (strstr (run.err, "did not answer with metrics") != NULL, "stderr: %s", run.err);
}
END_TEST

START_TEST (test_stats_without_a_metrics_socket_says_where_it_comes_from)
{
  fake_server_start (&srv, NULL, NULL);
  cleanup_free char *missing = bx_xasprintf ("%s/metrics.sock", srv.dir);
  setenv ("BOXMAKER_METRICS_SOCKET", missing, 1);
  run_cli ((const char *[]){ "stats", NULL });
  unsetenv ("BOXMAKER_METRICS_SOCKET");
  ASSERT_STATUS (3);
  cleanup_free char *want = bx_xasprintf ("cannot connect to %s", missing);
  ck_assert_msg (strstr (run.err, want) != NULL, "stderr: %s", run.err);
  /* The packaged default, where no brokerd serves metrics: the error names the setting. */
  if (access ("/run/boxmaker/metrics.sock", F_OK) != 0)
    {
      run_cli ((const char *[]){ "stats", NULL });
      ASSERT_STATUS (3);
      ck_assert_msg (strstr (run.err, "only when its config sets metrics_socket") != NULL,
                     "stderr: %s", run.err);
    }
}
END_TEST

static const char *const refused_frame[]
    = { "{\"v\":1,\"id\":\"ID\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":"
        "\"read_file: /x: no such file or directory\",\"class\":\"private\",\"untrusted\":false,"
        "\"truncated\":false,\"refused\":true}}",
        NULL };

START_TEST (test_refusals_asks_and_a_refusal_exits_1_with_its_reason)
{
  fake_server_start (&srv, script_answer, refused_frame);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--refusals", "--socket",
                             srv.path, "--call", "ID", NULL });
  ASSERT_STATUS (1);
  ck_assert_str_eq (run.out, "");
  ck_assert_str_eq (run.err, "boxmaker: refused: read_file: /x: no such file or directory\n");
  fake_server_join (&srv);
  ck_assert (json_is_true (json_object_get (json_object_get (srv.request, "msg"), "refusals")));
  fake_server_stop (&srv);

  fake_server_start (&srv, script_answer, refused_frame);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--refusals", "--json",
                             "--socket", srv.path, "--call", "ID", NULL });
  ASSERT_STATUS (1);
  ck_assert_str_eq (run.out, "{\"type\":\"result\",\"content\":\"read_file: /x: no such file or "
                             "directory\",\"class\":\"private\",\"untrusted\":false,\"truncated\":"
                             "false,\"refused\":true}\n");
}
END_TEST

START_TEST (test_without_refusals_the_request_is_a_1_0_clients)
{
  fake_server_start (&srv, script_answer, result_frame);
  run_cli ((const char *[]){ "call", "read_file", "{\"path\":\"/x\"}", "--socket", srv.path,
                             "--call", "ID", NULL });
  ASSERT_STATUS (0);
  fake_server_join (&srv);
  ck_assert_ptr_null (json_object_get (json_object_get (srv.request, "msg"), "refusals"));
}
END_TEST

static Suite *
cli_suite (void)
{
  Suite *s = suite_create ("cli");
  TCase *tc = tcase_create ("cli");
  tcase_add_checked_fixture (tc, NULL, teardown);
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, test_a_result_prints_the_content_on_stdout_and_exits_0);
  tcase_add_test (tc, test_json_output_prints_the_whole_answer);
  tcase_add_test (tc, test_the_generated_call_id_is_valid_and_the_session_is_passed);
  tcase_add_test (tc, test_a_denial_exits_1_with_the_reason_on_stderr);
  tcase_add_test (tc, test_a_failure_exits_1_with_the_message_on_stderr);
  tcase_add_test (tc, test_a_pending_frame_is_shown_while_waiting);
  tcase_add_test (tc, test_no_broker_exits_3);
  tcase_add_test (tc, test_a_broker_sending_garbage_exits_3);
  tcase_add_test (tc, test_a_silent_broker_exits_3_at_the_timeout);
  tcase_add_test (tc, test_a_zero_timeout_is_the_default_and_a_huge_one_exits_3);
  tcase_add_test (tc, test_the_socket_defaults_to_BOXMAKER_SOCKET);
  tcase_add_test (tc, test_usage_errors_exit_2_and_say_what_is_wrong);
  tcase_add_test (tc, test_help_and_version_exit_0);
  tcase_add_test (tc, test_arguments_past_the_argument_limit_come_from_a_file);
  tcase_add_test (tc, test_a_dash_reads_the_arguments_from_standard_input);
  tcase_add_test (tc, test_call_help_prints_the_usage);
  tcase_add_test (tc, test_every_command_takes_help);
  tcase_add_test (tc, test_stats_refuses_what_is_not_the_metrics_socket);
  tcase_add_test (tc, test_stats_without_a_metrics_socket_says_where_it_comes_from);
  tcase_add_test (tc, test_refusals_asks_and_a_refusal_exits_1_with_its_reason);
  tcase_add_test (tc, test_without_refusals_the_request_is_a_1_0_clients);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (cli_suite)
